// `parashift run`'s options (tools/cli/run_options.hpp).
#include <memory>

#include <CLI/CLI.hpp>

#include "tools/cli/command.hpp"
#include "tools/cli/number_check.hpp"
#include "tools/cli/run_options.hpp"

namespace parashift::tools {

void add_run_command(CLI::App& app, CliContext& ctx) {
  auto opts = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand(
      "run",
      "Run a scenario's training iterations on real hardware (--backend hw, one process per "
      "rank: mpirun -np N parashift run ...; --backend cuda: the same, one GPU per rank) or on "
      "the simulator (--backend sim)");
  cmd->add_option("scenario", opts->scenario, "Scenario YAML file")->required();
  cmd->footer(
      "Examples:\n"
      "  parashift run scenarios/hw-cpu-4rank.yaml --backend sim --json run.json\n"
      "  mpirun -np 4 --oversubscribe parashift run scenarios/hw-cpu-4rank.yaml --backend hw\n"
      "  mpirun -np 8 parashift run SCENARIO --backend cuda");
  cmd->add_option("--backend", opts->backend,
                  "hw (real executor, CPU), cuda (real executor, one GPU per rank) or sim "
                  "(simulator)")
      ->check(CLI::IsMember({"hw", "sim", "cuda"}))
      ->capture_default_str();
  cmd->add_option("--iterations", opts->iterations,
                  "Iterations (default: the scenario's run.iterations)")
      ->check(positive_number());
  cmd->add_option("--set", opts->overrides,
                  "Override a scenario field, e.g. --set plan.tp=2 (repeatable)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  cmd->add_option("--json", opts->json_path, "Also write every iteration's report as JSON to FILE")
      ->type_name("FILE");
  cmd->add_option("--profile", opts->profile_path,
                  "sim: predict the hw executor's iteration from a calibration profile "
                  "(parashift calibrate --scenario ... --out FILE); hw: the policy's cost "
                  "model of the CPU ranks (what policy.calibrate starts from)")
      ->type_name("CALIB.json")
      // The check without its ":FILE" suffix on the metavar.
      ->check(CLI::Validator(CLI::ExistingFile).description(""));
  cmd->add_option("--optimizer", opts->optimizer, "hw: sgd or adam (and sim --profile)")
      ->check(CLI::IsMember({"sgd", "adam"}))
      ->capture_default_str();
  cmd->add_option("--lr", opts->learning_rate,
                  "hw: learning rate (default 1e-3; Adam above hidden 1024: 1e-3 x 1024/hidden)")
      ->check(positive_number());
  cmd->add_option("--job", opts->job, "hw: job name for snapshot shards (default: scenario name)");
  cmd->add_option("--shm-dir", opts->shm_dir, "hw: where node-local snapshot shards live")
      ->capture_default_str();
  cmd->add_option("--ranks-per-node", opts->ranks_per_node,
                  "hw: ranks sharing a node's shared memory (default: as mpirun or srun placed "
                  "them; 0: all); shards are replicated on the next node")
      ->check(non_negative_number());
  cmd->add_option("--snapshot-every", opts->snapshot_every,
                  "hw: snapshot to shared memory before iterations K, 2K, ... (0: never); "
                  "shorthand for --set faults.snapshot.every=K")
      ->check(non_negative_number());
  cmd->add_flag("--restore", opts->restore,
                "hw: start from the newest snapshot every rank can restore (after a crash)");
  cmd->add_flag("--keep-snapshots", opts->keep_snapshots,
                "hw: leave the job's snapshot shards in shared memory at the end");
  cmd->add_option("--repartition", opts->repartitions,
                  "hw: move layers between stages before an iteration, e.g. 3:1,3 (repeatable)")
      ->type_name("ITER:L0,L1,...")
      ->allow_extra_args(false);
  cmd->add_option("--replan", opts->replans,
                  "hw: re-plan live before an iteration: the scenario's plan with these "
                  "fields, its weights and optimizer state re-sharded, e.g. "
                  "5:plan.pp=1,plan.dp=4 (repeatable)")
      ->type_name("ITER:plan.F=V,...")
      ->allow_extra_args(false);
  cmd->add_option("--inject-kill", opts->inject_kill,
                  "hw fault injection: rank R sends itself SIGKILL before iteration I; "
                  "shorthand for a faults.events entry {kind: kill, rank: R, at_iteration: I}")
      ->type_name("R@I");
  cmd->add_option("--clock", opts->clock,
                  "hw: compute time as measured (wall) or as counted layer work (counted: "
                  "the same on every machine, what the policy's tests use); virtual: counted "
                  "work and every message priced on a modelled link, so iteration and "
                  "communication times are the same on every machine too")
      ->check(CLI::IsMember({"wall", "counted", "virtual"}))
      ->capture_default_str();
  cmd->add_option("--link-GBps", opts->link_GBps,
                  "hw --clock virtual: the modelled link's rate, GB/s (default 10)")
      ->check(positive_number());
  cmd->add_option("--link-latency-us", opts->link_latency_us,
                  "hw --clock virtual: the modelled link's latency per ring step or message, "
                  "us (default 5)")
      ->check(non_negative_number());
  cmd->add_option("--device", opts->device,
                  "cuda: GPU index (default: the rank's index on its node)")
      ->check(CLI::Range(0, 1023));
  cmd->add_option("--math", opts->math,
                  "cuda: GEMM precision, fp32 (default) or tf32 (tensor cores)")
      ->check(CLI::IsMember({"fp32", "tf32"}));
  cmd->add_option("--watchdog", opts->watchdog_s,
                  "hw: end the job, naming the rank, group and call, when a communication call "
                  "makes no progress for SECONDS (0: off; the NCCL path has its own)")
      ->check(non_negative_number())
      ->capture_default_str()
      ->type_name("SECONDS");
  cmd->add_flag("--elastic", opts->elastic,
                "hw: supervise the job instead of being a rank: launch its ranks (LAUNCHER -np "
                "tp*pp*dp*cp), and after a rank dies relaunch them with --restore, its node "
                "replaced by a spare while --spares last; run without mpirun");
  cmd->add_option("--spares", opts->spares,
                  "--elastic: spare nodes (a failed rank's node is replaced by one: its shared "
                  "memory is gone, its shards come from replicas)")
      ->check(non_negative_number())
      ->capture_default_str();
  cmd->add_flag("--shrink", opts->shrink,
                "--elastic: with no spare left, the dead rank's node is lost too (its shared "
                "memory gone) and the job relaunches on the nodes left: fewer data-parallel "
                "replicas, the global batch with them, the snapshot restored resharded");
  cmd->add_option("--node-ids", opts->node_ids,
                  "hw: the node each group of --ranks-per-node ranks runs on, whose shared "
                  "memory holds its shards (default 0,1,...; set by --elastic after a shrink)")
      ->type_name("LIST");
  cmd->add_option("--max-restarts", opts->max_restarts, "--elastic: relaunches before giving up")
      ->check(non_negative_number())
      ->capture_default_str();
  cmd->add_option("--launcher", opts->launcher,
                  "--elastic: the MPI launcher to run the ranks with (found on PATH)")
      ->capture_default_str();
  cmd->callback([opts, &ctx] { run_run(*opts, ctx); });
}

}  // namespace parashift::tools
