// `parashift run SCENARIO --backend hw --elastic [--spares N]`: this process
// supervises the job instead of being one of its ranks. It launches the
// ranks (LAUNCHER -np tp*pp*dp*cp parashift run ... without --elastic),
// forwards their output, and when a rank dies on a signal (Open MPI's
// "mpirun noticed that process rank R ... exited on signal S") relaunches
// them with --restore, without a person: the newest snapshot every rank can
// reach is restored from the nodes' shared memory, and only the shards that
// were lost travel (hw/exec/hw_backend_directives.cpp). While spares last,
// the dead rank's node is taken as failed and replaced by a spare: its
// shared memory is gone (its job directory removed, as a fresh machine's
// would be), so its ranks' shards come from their replicas on the next
// node. With no spare left the job relaunches on the same nodes, or with
// --shrink the node is lost too and the job relaunches on the nodes left
// with fewer replicas (tools/cli/elastic_shrink.hpp), the snapshot restored
// resharded (hw/exec/hw_backend_reshard.cpp). A
// relaunch runs the plan of the newest snapshot (hw/snapshot/snapshot_plan.hpp),
// which differs from the scenario's after a live re-plan. A job
// that ends with a status and no rank dead on a signal (bad input, an
// environment error) is not relaunched: its status is the supervisor's.
// With --json FILE the last launch's report gets an `elastic` record of
// every launch (its command, status, the rank dead and its signal, the node
// replaced, the spares left); where no launch completed, FILE holds the
// record alone.
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "core/input_error.hpp"
#include "core/plan_json.hpp"
#include "core/scenario/scenario.hpp"
#include "hw/exec/training_run.hpp"
#include "hw/snapshot/shard_store.hpp"
#include "hw/snapshot/snapshot_plan.hpp"
#include "tools/cli/elastic_shrink.hpp"
#include "tools/cli/format_number.hpp"
#include "tools/cli/output_file.hpp"
#include "tools/cli/run_options.hpp"

namespace parashift::tools {

namespace {

std::vector<std::string> split_words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// `name` if it holds a '/', else the first executable PATH entry named so;
// empty when there is none.
std::string find_on_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

struct LaunchResult {
  int exit_code = 0;  // the launcher's (128 + signal when it died on one)
  std::string stderr_text;
};

// Runs argv[0] (a path) with its standard error through a pipe: copied to
// `err` as it arrives and kept for the failure's diagnosis.
LaunchResult launch(const std::vector<std::string>& argv, std::ostream& err) {
  std::array<int, 2> pipe_fds{};
  if (::pipe(pipe_fds.data()) != 0)
    throw core::EnvironmentError(std::string("--elastic: pipe: ") + std::strerror(errno),
                                 "the process's file descriptors");
  const pid_t pid = ::fork();
  if (pid < 0)
    throw core::EnvironmentError(std::string("--elastic: fork: ") + std::strerror(errno),
                                 "the machine's process limit");
  if (pid == 0) {
    ::dup2(pipe_fds[1], STDERR_FILENO);
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    std::fprintf(stderr, "--elastic: cannot run %s: %s\n", args[0], std::strerror(errno));
    ::_exit(127);
  }
  ::close(pipe_fds[1]);
  LaunchResult result;
  std::array<char, 4096> buffer{};
  for (;;) {
    const ssize_t n = ::read(pipe_fds[0], buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    result.stderr_text.append(buffer.data(), static_cast<std::size_t>(n));
    err.write(buffer.data(), n);
    err.flush();
  }
  ::close(pipe_fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

struct DeadRank {
  int rank = 0;
  int signal = 0;
};

// Open MPI's report of a rank killed by a signal.
std::optional<DeadRank> dead_rank(const std::string& launcher_stderr) {
  static const std::regex noticed(
      R"(process rank ([0-9]+) with PID [0-9]+ on node \S+ exited on signal ([0-9]+))");
  std::smatch m;
  if (!std::regex_search(launcher_stderr, m, noticed)) return std::nullopt;
  return DeadRank{std::stoi(m[1].str()), std::stoi(m[2].str())};
}

// The last launch's --json report (null when it wrote none) with the
// supervisor's record of every launch added.
void write_elastic_json(const std::string& path, const nlohmann::json& launches, bool completed) {
  if (path.empty()) return;
  nlohmann::json out;
  if (completed) {
    std::ifstream in(path);
    out = nlohmann::json::parse(in, nullptr, false);
    if (out.is_discarded() || !out.is_object()) out = nlohmann::json::object();
  }
  out["elastic"] = {
      {"completed", completed}, {"restarts", launches.size() - 1}, {"launches", launches}};
  write_json_file(path, out);
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

}  // namespace

std::vector<std::string> rank_arguments(const RunOptions& o, bool relaunch) {
  std::vector<std::string> a{"run", o.scenario, "--backend", o.backend};
  auto option = [&a](const char* name, const std::string& value) {
    a.push_back(name);
    a.push_back(value);
  };
  if (o.iterations > 0) option("--iterations", std::to_string(o.iterations));
  for (const auto& s : o.overrides) option("--set", s);
  if (!o.json_path.empty()) option("--json", o.json_path);
  if (!o.profile_path.empty()) option("--profile", o.profile_path);
  option("--optimizer", o.optimizer);
  if (o.learning_rate > 0) {
    char lr[32];
    std::snprintf(lr, sizeof lr, "%.17g", o.learning_rate);
    option("--lr", lr);
  }
  if (!o.job.empty()) option("--job", o.job);
  option("--shm-dir", o.shm_dir);
  if (o.ranks_per_node >= 0) option("--ranks-per-node", std::to_string(o.ranks_per_node));
  if (o.snapshot_every > 0) option("--snapshot-every", std::to_string(o.snapshot_every));
  if (o.restore || relaunch) a.push_back("--restore");
  if (o.keep_snapshots) a.push_back("--keep-snapshots");
  for (const auto& r : o.repartitions) option("--repartition", r);
  for (const auto& r : o.replans) option("--replan", r);
  if (!o.inject_kill.empty() && !relaunch) option("--inject-kill", o.inject_kill);
  option("--clock", o.clock);
  if (o.link_GBps > 0) option("--link-GBps", fmt("%.17g", o.link_GBps));
  if (o.link_latency_us >= 0) option("--link-latency-us", fmt("%.17g", o.link_latency_us));
  if (o.device >= 0) option("--device", std::to_string(o.device));
  if (!o.math.empty()) option("--math", o.math);
  option("--watchdog", std::to_string(o.watchdog_s));
  return a;
}

void run_elastic(const RunOptions& opts, CliContext& ctx) {
  if (opts.backend != "hw" && opts.backend != "cuda")
    throw core::InputError(
        "--elastic: only with --backend hw or cuda (it launches the "
        "executor's ranks), found --backend " +
        opts.backend);
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(var) != nullptr)
      throw core::InputError(
          "--elastic: run it without mpirun or srun (it launches the ranks itself)");
  if (!opts.node_ids.empty())
    throw core::InputError("--node-ids: set by --elastic for its ranks, not given with it");
  const std::vector<std::string> launcher = split_words(opts.launcher);
  const std::string launcher_path = launcher.empty() ? "" : find_on_path(launcher[0]);
  if (launcher_path.empty())
    throw core::InputError("--launcher: no '" + (launcher.empty() ? "" : launcher[0]) +
                           "' on PATH (expected Open MPI's mpirun, e.g. --launcher \"mpirun "
                           "--oversubscribe\")");
  // The scenario as the ranks will read it: its rank count, name and checks.
  const core::Scenario scenario = core::load_scenario(opts.scenario, opts.overrides);
  // The events and spares the ranks would refuse (timed slow events on virtual time only).
  hw::scenario_slowdown(scenario, 0,
                        opts.clock == "virtual" ? std::optional<core::TimeNs>(0) : std::nullopt);
  const int per_node = opts.ranks_per_node > 0 ? opts.ranks_per_node : scenario.plan.gpus();
  // The nodes the job may run on (their shared memory directories): all of
  // the first launch's; a node lost with no spare left (--shrink) leaves.
  std::vector<int> nodes;
  for (int n = 0; n < scenario.plan.gpus() / per_node; ++n) nodes.push_back(n);
  const int first_nodes = static_cast<int>(nodes.size());
  const std::string job = opts.job.empty() ? scenario.name : opts.job;
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec)
    throw core::EnvironmentError("--elastic: cannot find this program (/proc/self/exe)",
                                 "a Linux /proc");
  int spares = opts.spares;
  nlohmann::json launches = nlohmann::json::array();
  for (int restarts = 0;; ++restarts) {
    auto rank_args = rank_arguments(opts, restarts > 0);
    // A relaunch runs the plan of the newest snapshot (a live re-plan's),
    // shrunk to the nodes left when that plan no longer fits on them.
    std::vector<std::string> plan_sets;
    if (restarts > 0) plan_sets = hw::read_snapshot_plan(opts.shm_dir, job);
    std::vector<std::string> all_sets = opts.overrides;
    all_sets.insert(all_sets.end(), plan_sets.begin(), plan_sets.end());
    core::ScenarioOptions read;  // a shrunk job's plan is smaller than the cluster
    read.plan_sets_gpus = static_cast<int>(nodes.size()) < first_nodes;
    const core::ParallelPlan plan = core::load_scenario(opts.scenario, all_sets, read).plan;
    const int room = static_cast<int>(nodes.size()) * per_node;
    int ranks = plan.gpus();
    if (ranks > room) {
      const core::ParallelPlan fits = shrink_to_fit(plan, room, per_node);
      if (fits.dp < 1) {
        ctx.out << "elastic: " << plan.label() << " needs " << plan.tp * plan.pp * plan.cp
                << " ranks a replica; " << nodes.size() << " node(s) of " << per_node
                << " left: giving up\n";
        ctx.status = 1;
        return write_elastic_json(opts.json_path, launches, false);
      }
      ctx.out << "elastic: the job shrinks to " << fits.label() << ", global batch "
              << fits.global_batch << ", on " << fits.gpus() / per_node << " node(s)\n";
      plan_sets = core::plan_overrides(fits);
      ranks = fits.gpus();
    }
    for (const auto& line : plan_sets) {
      rank_args.push_back("--set");
      rank_args.push_back(line);
    }
    const std::vector<int> used(nodes.begin(), nodes.begin() + ranks / per_node);
    if (static_cast<int>(used.size()) < first_nodes) {  // a part of the cluster
      rank_args.push_back("--node-ids");
      rank_args.push_back(node_ids_text(used));
    }
    std::vector<std::string> argv{launcher_path};
    argv.insert(argv.end(), launcher.begin() + 1, launcher.end());
    argv.insert(argv.end(), {"-np", std::to_string(ranks), self.string()});
    argv.insert(argv.end(), rank_args.begin(), rank_args.end());
    ctx.out << "elastic: launch " << restarts + 1 << ": " << joined(argv) << "\n";
    ctx.out.flush();
    // A report left by an earlier run must not pass for this launch's.
    if (!opts.json_path.empty()) std::filesystem::remove(opts.json_path, ec);
    const LaunchResult result = launch(argv, ctx.err);
    nlohmann::json& record = launches.emplace_back(nlohmann::json{
        {"launch", restarts + 1}, {"command", joined(argv)}, {"exit_code", result.exit_code}});
    if (result.exit_code == 0) {
      ctx.out << "elastic: the job completed after " << restarts << " restart(s)\n";
      return write_elastic_json(opts.json_path, launches, true);
    }
    const std::optional<DeadRank> dead = dead_rank(result.stderr_text);
    if (!dead) {
      ctx.out << "elastic: the job ended with status " << result.exit_code
              << " and no rank dead on a signal: not relaunched\n";
      ctx.status = result.exit_code;
      return write_elastic_json(opts.json_path, launches, false);
    }
    ctx.out << "elastic: rank " << dead->rank << " died on signal " << dead->signal << "\n";
    record["dead_rank"] = dead->rank;
    record["signal"] = dead->signal;
    if (restarts >= opts.max_restarts) {
      ctx.out << "elastic: " << opts.max_restarts
              << " restart(s) spent (--max-restarts): giving up\n";
      ctx.status = 1;
      return write_elastic_json(opts.json_path, launches, false);
    }
    const auto at = static_cast<std::size_t>(dead->rank / per_node);
    const int node = at < nodes.size() ? nodes[at] : static_cast<int>(at);
    const auto node_memory = hw::ShardStore(opts.shm_dir, job, node).node_dir();
    if (spares == 0 && opts.shrink) {
      std::filesystem::remove_all(node_memory, ec);
      if (at < nodes.size()) nodes.erase(nodes.begin() + static_cast<std::ptrdiff_t>(at));
      ctx.out << "elastic: node " << node << " lost, no spare left (--shrink): " << nodes.size()
              << " node(s) left\n";
      record["node_lost"] = node;
    } else if (spares > 0) {
      --spares;
      std::filesystem::remove_all(node_memory, ec);
      ctx.out << "elastic: node " << node << " replaced by a spare (its shared memory gone); "
              << spares << " spare(s) left\n";
      record["node_replaced"] = node;
      record["spares_left"] = spares;
    } else {
      ctx.out << "elastic: no spare left: relaunching on the same nodes\n";
    }
    ctx.out << "elastic: relaunching with --restore (restart " << restarts + 1 << " of at most "
            << opts.max_restarts << ")\n";
  }
}

}  // namespace parashift::tools
