#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli_harness.hpp"
#include "core/scenario/scenario.hpp"
#include "tests/temp_dir.hpp"
#ifdef PARASHIFT_HAVE_CUDA
#include "hw/cuda/cuda_probe.hpp"
#endif

namespace {

const std::string kData = std::string(PARASHIFT_SOURCE_DIR) + "/tests/tools/data/";
#ifdef PARASHIFT_HAVE_CUDA
constexpr bool kCudaBuild = true;
#else
constexpr bool kCudaBuild = false;
#endif

using Result = parashift::test::CliResult;

Result cli(std::vector<std::string> args) {
  return parashift::test::run_parashift(std::move(args));
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string temp_path(const std::string& name) {
  return parashift::test::process_temp_dir().file(name).string();
}

int lines(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

}  // namespace

TEST_CASE("simulate prints the summary fields") {
  const Result r = cli({"simulate", kData + "small.yaml"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  for (const char* field : {"iteration time", "throughput", "MFU", "pipeline bubble",
                            "exposed comm", "peak memory / GPU"}) {
    CHECK(r.out.find(field) != std::string::npos);
  }
}

TEST_CASE("same scenario and seed give byte-identical JSON") {
  const std::string a = temp_path("a.json"), b = temp_path("b.json");
  REQUIRE(cli({"simulate", kData + "small.yaml", "--json", a}).status == 0);
  REQUIRE(cli({"simulate", kData + "small.yaml", "--json", b}).status == 0);
  CHECK(read_file(a) == read_file(b));
  CHECK(read_file(a).find("\"iteration_time_s\"") != std::string::npos);
}

TEST_CASE("--set overrides scenario fields without editing the file") {
  const std::string a = temp_path("set.json");
  const Result r = cli({"simulate", kData + "small.yaml", "--set", "plan.tp=4", "--set",
                        "plan.dp=2", "--set", "training.global_batch=64", "--json", a});
  INFO(r.err);
  REQUIRE(r.status == 0);
  const std::string json = read_file(a);
  CHECK(json.find("\"tp\": 4") != std::string::npos);
  CHECK(json.find("\"global_batch\": 64") != std::string::npos);
}

TEST_CASE("--trace writes a Perfetto trace, --links a per-link CSV") {
  const std::string trace = temp_path("trace.json"), links = temp_path("links.csv");
  const Result r = cli({"simulate", kData + "small.yaml", "--trace", trace, "--links", links});
  INFO(r.err);
  REQUIRE(r.status == 0);
  const std::string t = read_file(trace);
  // Chrome trace-event JSON: named tracks, complete events with ts/dur in us.
  CHECK(t.rfind("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", 0) == 0);
  CHECK(t.find("\"thread_name\"") != std::string::npos);
  CHECK(t.find("\"name\":\"F0\"") != std::string::npos);
  CHECK(t.find("\"name\":\"grad sync\"") != std::string::npos);
  CHECK(t.find("\"name\":\"busy\"") != std::string::npos);
  const std::string csv = read_file(links);
  CHECK(csv.rfind("link,bandwidth_Bps,bytes,busy_s,utilisation\n", 0) == 0);
  CHECK(lines(csv) > 1);
}

TEST_CASE("run.duration covers simulated wall time by reusing the unchanged iteration") {
  const std::string json = temp_path("duration.json");
  const Result r = cli({"simulate", kData + "small.yaml", "--set", "run.iterations=null", "--set",
                        "run.duration=1h", "--json", json});
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto doc = nlohmann::json::parse(read_file(json));
  const double it = doc["iteration_time_s"].get<double>();
  const int n = doc["iterations"].get<int>();
  // The smallest whole number of iterations covering 3600 s, one simulated.
  CHECK(n == static_cast<int>(std::ceil(3600.0 / it - 1e-9)));
  CHECK(doc["simulated_iterations"] == 1);
}

TEST_CASE("bad input: one line naming file and field, exit status 2") {
  struct Case {
    std::vector<std::string> args;
    std::string expected;  // a part of the one-line message
  };
  const std::vector<Case> cases = {
      {{"simulate", kData + "missing.yaml"}, "missing.yaml: cannot open scenario file"},
      {{"simulate", kData + "malformed.yaml"},
       "malformed.yaml:4:9: malformed YAML: end of sequence flow not found"},
      {{"simulate", kData + "unknown_field.yaml"},
       "unknown_field.yaml:12:3: plan.tpp: unknown field (expected one of:"},
      {{"simulate", kData + "wrong_type.yaml"},
       "wrong_type.yaml:7:17: training.global_batch: expected a positive integer, found 'lots'"},
      {{"simulate", kData + "small.yaml", "--set", "plan.tp=3"},
       "plan.tp (set on the command line): tp=3 does not divide heads=32"},
      {{"simulate", kData + "small.yaml", "--set", "plan.dp=8"},
       "small.yaml: plan.dp (set on the command line): tp*pp*dp*cp=2*2*8*1=32 differs from the "
       "cluster's 16 GPUs"},
      {{"simulate", kData + "small.yaml", "--set", "plan.tp=4"},
       "small.yaml:17:7: plan.dp: tp*pp*dp*cp=4*2*4*1=32 differs from the cluster's 16 GPUs"},
      {{"simulate", kData + "small.yaml", "--set", "training.global_batch=30"},
       "training.global_batch (set on the command line): 30 is not divisible by dp*micro_batch=4"},
      {{"simulate", kData + "small.yaml", "--set", "plan.schedule=zigzag"},
       "plan.schedule (set on the command line): expected one of gpipe, 1f1b, interleaved_1f1b, "
       "zb_h1, found 'zigzag'"},
      {{"simulate", kData + "small.yaml", "--set", "plan.order=pp-dp"},
       "plan.order (set on the command line): expected one of tp-cp-dp-pp, tp-cp-pp-dp, found "
       "'pp-dp'"},
      {{"simulate", kData + "small.yaml", "--set", "cluster.device=tpu-v5"},
       "cluster.device (set on the command line): unknown device 'tpu-v5'"},
      {{"simulate", kData + "small.yaml", "--set", "model=gpt-9"}, "unknown model preset 'gpt-9'"},
      {{"simulate", kData + "small.yaml", "--set", "plan"}, "--set plan: expected key.path=value"},
      {{"simulate", kData + "small.yaml", "--set", "cluster.topology.nodes=0"}, "nodes"},
      {{"simulate", kData + "small.yaml", "--bogus"}, "--bogus"},
      {{"simulate", kData + "small.yaml", "--set",
        "faults={events: [{kind: degrade, link: nope, fraction: 0.5, at: 1s}]}"},
       "faults.events[0] (set on the command line): unknown link 'nope' (expected a directed "
       "link name"},
      {{"simulate", kData + "small.yaml", "--set",
        "faults={events: [{kind: degrade, scope: inter_rack, fraction: 0.5, at: 1s}]}"},
       "faults.events[0].scope (set on the command line): expected inter_node or intra_node, "
       "found 'inter_rack'"},
      {{"simulate", kData + "small.yaml", "--set",
        "faults={events: [{kind: degrade, scope: inter_node, link: x, fraction: 0.5}]}"},
       "faults.events[0].scope (set on the command line): expected one of link (a link name) or "
       "scope (inter_node or intra_node)"},
      {{"simulate", kData + "small.yaml", "--set",
        "faults={events: [{kind: degrade, fraction: 0.5}]}"},
       "faults.events[0].link (set on the command line): expected one of link (a link name) or "
       "scope"},
      {{"simulate", kData + "small.yaml", "--set", "policy={replan: on}"},
       "policy.replan (set on the command line): needs calibrate on"},
      {{"simulate", kData + "small.yaml", "--set", "policy={calibrate: on, replan: {trigger: 0}}"},
       "policy.replan.trigger (set on the command line)"},
      {{"simulate", kData + "small.yaml", "--set",
        "faults={events: [{kind: slow, gpu: 99, factor: 2, at: 1s}]}"},
       "faults.events[0] (set on the command line): gpu 99 is not in the cluster (0..15)"},
      {{"simulate", kData + "small.yaml", "--set", "policy={balance: maybe}"},
       "policy.balance (set on the command line): expected true or false, found 'maybe'"},
      {{"simulate", kData + "small.yaml", "--set", "policy={strager: on}"},
       "unknown policy module 'strager'"},
      {{"simulate", kData + "small.yaml", "--set", "run.duration=6h"},
       "run.duration (set on the command line): give either run.iterations or run.duration"},
      {{"simulate", kData + "small.yaml", "--set", "run.iterations=null", "--set",
        "run.duration=soon"},
       "run.duration (set on the command line): expected a duration like 30s, 10min, 3h"},
      {{"simulate", kData + "small.yaml", "--set", "run.network=ideal"},
       "run.network (set on the command line): expected one of maxmin, path, found 'ideal'"},
      {{"simulate", kData + "small.yaml", "--set", "run.network=path", "--links",
        parashift::test::process_temp_dir().file("x.csv").string()},
       "--links needs the max-min network"},
      {{"simulate", kData + "small.yaml", "--links",
        parashift::test::process_temp_dir().path().string()},
       ": is a folder; expected a file name"},
      {{"simulate", kData + "small.yaml", "--set",
        "faults={events: [{kind: fail, target: maintenance, id: 0, at: 1min}]}"},
       "faults.events[0] (set on the command line): maintenance is played by fault campaigns "
       "only (the simulator does not drain); run `parashift faults"},
      {{"simulate", kData + "small.yaml", "--set",
        "faults={events: [{kind: fail, target: link, id: l1-p0, at: 1min}]}"},
       "unknown link 'l1-p0' (expected a link name such as 'g0->s0' or a link id)"},
      {{"simulate", kData + "small.yaml", "--set",
        "faults={events: [{kind: fail, target: gpu, id: 16, at: 1min}]}"},
       "faults.events[0] (set on the command line).id: expected a gpu index in [0, 16), found "
       "'16'"},
      {{"simulate", kData + "small.yaml", "--iterations", "0"}, "--iterations"},
      {{"faults", kData + "small.yaml", "--set", "faults.snapshot.overlap=maybe"},
       "faults.snapshot.overlap (set on the command line): expected true or false, found "
       "'maybe'"},
      {{"faults", kData + "small.yaml", "--days", "0"},
       "--days: expected a number of days > 0 and <= 3650, found '0'"},
      {{"faults", kData + "small.yaml", "--days", "soon"},
       "--days: expected a number of days > 0 and <= 3650, found 'soon'"},
      {{"run", kData + "small.yaml", "--backend", "sim", "--math", "tf32"},
       "--math: only with --backend cuda"},
      {{"run", kData + "small.yaml", "--backend", "hw", "--device", "1"},
       "--device: only with --backend cuda"},
      {{"run", kData + "small.yaml", "--backend", "cuda", "--math", "fp16"}, "--math: fp16 not in"},
      {{"run", kData + "small.yaml", "--backend", "hw", "--repartition", "2"},
       "--repartition 2: expected ITERATION:LAYERS,LAYERS,... e.g. 3:1,3"},
      {{"run", kData + "small.yaml", "--backend", "hw", "--repartition", "2:4"},
       "--repartition 2:4: expected 2 entries >= 1 summing to 32, found [4]"},
      {{"run", kData + "small.yaml", "--backend", "cuda", "--device", "-1"},
       "--device: Value -1 not in range 0 to 1023"},
      {{"run", kData + "small.yaml", "--backend", "hw", "--replan", "3"},
       "--replan 3: expected ITERATION:plan.FIELD=VALUE,... e.g. 5:plan.pp=1,plan.dp=4"},
      {{"run", kData + "small.yaml", "--backend", "hw", "--replan", "3:model.layers=2"},
       "(found 'model.layers=2')"},
      {{"run", kData + "small.yaml", "--backend", "hw", "--replan", "3:plan.tp=3"},
       "--replan 3:plan.tp=3: "},
      {{"run", kData + "small.yaml", "--backend", "sim", "--replan", "3:plan.pp=1"},
       "--replan: only with --backend hw or cuda"},
      {{"run", kData + "small.yaml", "--backend", "hw", "--spares", "1"},
       "--spares, --max-restarts, --launcher, --shrink: only with --elastic"},
      {{"run", kData + "small.yaml", "--backend", "sim", "--elastic"},
       "--elastic: only with --backend hw or cuda (it launches the executor's ranks), found "
       "--backend sim"},
      {{"run", kData + "small.yaml", "--backend", "hw", "--elastic", "--launcher",
        "no-such-launcher-xyz --oversubscribe"},
       "--launcher: no 'no-such-launcher-xyz' on PATH (expected Open MPI's mpirun"},
      {{"run", kData + "small.yaml", "--backend", "hw", "--elastic", "--spares", "-1"},
       "--spares: expected a number >= 0, found '-1'"},
      {{"run", kData + "small.yaml", "--backend", "hw", "--lr", "-1"},
       "--lr: expected a number > 0, found '-1'"},
      {{"run", kData + "small.yaml", "--backend", "hw", "--clock", "virtual", "--link-GBps",
        "fast"},
       "--link-GBps: expected a number > 0, found 'fast'"},
      {{"run", kData + "small.yaml", "--backend", "hw", "--clock", "virtual", "--link-latency-us",
        "-5"},
       "--link-latency-us: expected a number >= 0, found '-5'"},
      {{"simulate", kData + "small.yaml", "--set", "cluster.nccl_algo=fast"},
       "cluster.nccl_algo (set on the command line): expected auto, ring, tree or nvls, got "
       "'fast'"},
      {{"simulate"}, "scenario is required"},
      {{"fly"}, "unknown subcommand 'fly' (expected one of: simulate, plan, validate, topo"},
  };
  for (const auto& c : cases) {
    const Result r = cli(c.args);
    INFO(c.args.back(), " -> ", r.err);
    CHECK(r.status == 2);
    CHECK(r.err.find(c.expected) != std::string::npos);
    CHECK(lines(r.err) == 1);
    CHECK(r.err.rfind("parashift: error: ", 0) == 0);
  }
}

TEST_CASE("run --elastic under a launcher: one clear line and exit 2") {
  // The supervisor launches the ranks itself; started as one of them (Open
  // MPI's environment set) it would launch a job per rank.
  ::setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  const Result r = cli({"run", kData + "small.yaml", "--backend", "hw", "--elastic"});
  ::unsetenv("OMPI_COMM_WORLD_SIZE");
  CHECK(r.status == 2);
  CHECK(r.err ==
        "parashift: error: --elastic: run it without mpirun or srun (it launches the "
        "ranks itself)\n");
}

TEST_CASE("under a launcher only the first rank reports a bad input, every rank exits 2") {
  const std::vector<std::string> args{"simulate", kData + "small.yaml", "--set", "plan.tp=3"};
  ::setenv("OMPI_COMM_WORLD_RANK", "1", 1);
  const Result other = cli(args);
  ::setenv("OMPI_COMM_WORLD_RANK", "0", 1);
  const Result first = cli(args);
  ::unsetenv("OMPI_COMM_WORLD_RANK");
  CHECK(other.status == 2);
  CHECK(other.err.empty());
  CHECK(first.status == 2);
  CHECK(lines(first.err) == 1);
  CHECK(first.err.find("tp=3 does not divide heads=32") != std::string::npos);
}

TEST_CASE("calibrate --backend cuda on a machine without a GPU: one clear line and exit 2") {
#ifdef PARASHIFT_HAVE_CUDA
  // On a machine with a GPU this would calibrate it (and start MPI in the
  // test process): there is nothing to check there.
  if (!parashift::hw::probe_cuda().devices.empty()) return;
#endif
  const Result r = cli({"calibrate", "--backend", "cuda", "--quick"});
  INFO(r.err);
  CHECK(r.status == (kCudaBuild ? 3 : 2));  // no GPU is the environment; no CUDA build, input
  CHECK(lines(r.err) == 1);
#ifdef PARASHIFT_HAVE_CUDA
  CHECK(r.err.find("--backend cuda: no CUDA device (0 visible") != std::string::npos);
#else
  CHECK(r.err.find("calibrate --backend cuda: this parashift was built without the CUDA toolkit") !=
        std::string::npos);
#endif
}

TEST_CASE("run --backend cuda without the GPU it names: one clear line and exit 2") {
  // Checked before MPI starts. Without the CUDA flavour the run says that instead.
  const Result r = cli({"run", std::string(PARASHIFT_SOURCE_DIR) + "/tests/hw/data/gpu-1rank.yaml",
                        "--backend", "cuda", "--device", "7"});
  INFO(r.err);
  CHECK((r.status == 2 || (kCudaBuild && r.status == 3)));  // 3: no GPU at all
  CHECK(lines(r.err) == 1);
#ifdef PARASHIFT_HAVE_CUDA
  // This machine has no GPU, or a few: device 7 is not there (or none is).
  CHECK((r.err.find("--device 7: no such CUDA device") != std::string::npos ||
         r.err.find("--backend cuda: no CUDA device") != std::string::npos));
#else
  CHECK(r.err.find("--backend cuda: this parashift was built without the CUDA toolkit") !=
        std::string::npos);
#endif
}

TEST_CASE("--version and --help on every subcommand exit 0") {
  const Result v = cli({"--version"});
  CHECK(v.status == 0);
  CHECK(v.out.find("parashift ") != std::string::npos);
  for (const char* sub : {"simulate", "plan", "validate", "topo", "faults"}) {
    const Result h = cli({sub, "--help"});
    INFO(sub);
    CHECK(h.status == 0);
    CHECK(h.out.find("Usage") != std::string::npos);
  }
  // The commands of this guide show an example and their defaults.
  for (const char* sub : {"simulate", "plan", "topo", "faults", "validate", "run", "calibrate",
                          "collectives", "sweep"}) {
    INFO(sub);
    CHECK(cli({sub, "--help"}).out.find("Examples:\n  parashift ") != std::string::npos);
  }
  const std::string faults = cli({"faults", "--help"}).out;
  CHECK(faults.find("--seeds N:INT in [1 - 100000]=100") != std::string::npos);
  // The file check does not append ":FILE" to the option's metavar.
  const std::string run = cli({"run", "--help"}).out;
  CHECK(run.find("--profile CALIB.json ") != std::string::npos);
  CHECK(run.find("CALIB.json:FILE") == std::string::npos);
}

TEST_CASE("--links lists every link of the topology, idle ones as zeros") {
  const std::string links = temp_path("all-links.csv");
  const Result r = cli({"simulate", kData + "small.yaml", "--links", links});
  INFO(r.err);
  REQUIRE(r.status == 0);
  const parashift::core::Scenario s = parashift::core::load_scenario(kData + "small.yaml");
  const std::string csv = read_file(links);
  // A header, then one row per directed link.
  CHECK(lines(csv) == 1 + static_cast<int>(s.topology.links().size()));
  // 2 nodes on a 2-tier fat-tree: spine links to leaves that carry no
  // traffic of this plan exist, so some row has zero bytes.
  CHECK(csv.find(",0,0,0\n") != std::string::npos);
}

TEST_CASE("simulate --iterations and --seed override run.iterations and run.seed") {
  const std::string json = temp_path("iterations.json");
  const Result r =
      cli({"simulate", kData + "small.yaml", "--iterations", "5", "--seed", "11", "--json", json});
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto doc = nlohmann::json::parse(read_file(json));
  CHECK(doc["iterations"] == 5);  // small.yaml says 3
}

TEST_CASE("--compare without slowdowns: the footer compares throughput, claims no recovery") {
  const Result r = cli({"simulate", kData + "small.yaml", "--compare", "run.network=path"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("recovers") == std::string::npos);
  CHECK(r.out.find("run.network=path: ") != std::string::npos);
  CHECK(r.out.find("% throughput against as written (neither run is slowed)") != std::string::npos);
}

TEST_CASE("faults: ETTR is reported by its bad tail, min / p1 / p10 / p50") {
  const std::string json = temp_path("faults-ettr.json");
  const Result r = cli({"faults", kData + "small.yaml", "--seeds", "3", "--days", "2", "--set",
                        "faults={node_mtbf_hours: 50, spares: 64}", "--json", json});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("ETTR min / p1 / p10 / p50") != std::string::npos);
  const auto ettr = nlohmann::json::parse(read_file(json))["policies"]["snapshot"]["ettr"];
  // Nearest rank over 3 seeds: p1 and p10 are the ceil(0.03) = ceil(0.3) = 1st
  // smallest, the minimum; p50 the ceil(1.5) = 2nd.
  CHECK(ettr["p1"] == ettr["min"]);
  CHECK(ettr["p10"] == ettr["min"]);
  CHECK(ettr["p50"].get<double>() >= ettr["min"].get<double>());
  CHECK(ettr["max"].get<double>() >= ettr["p50"].get<double>());
}

TEST_CASE("simulate --svg draws one row per stage and data-parallel group") {
  const std::string svg_path = temp_path("pipeline.svg");
  const Result r = cli({"simulate", kData + "small.yaml", "--svg", svg_path});
  INFO(r.err);
  REQUIRE(r.status == 0);
  const std::string svg = read_file(svg_path);
  const parashift::core::Scenario s = parashift::core::load_scenario(kData + "small.yaml");
  CHECK(svg.rfind("<svg ", 0) == 0);
  CHECK(svg.find("</svg>") != std::string::npos);
  // Rows: "stage 0".."stage pp-1", then "dp sync, stage k" for each stage.
  CHECK(svg.find(">stage " + std::to_string(s.plan.pp - 1) + "<") != std::string::npos);
  CHECK(svg.find(">dp sync, stage 0<") != std::string::npos);
  // Every stage runs forward passes: at least one forward tooltip.
  CHECK(svg.find("<title>forward of micro-batch 0") != std::string::npos);
}

TEST_CASE("simulate shrinks the job when a GPU fails and no spare is left") {
  // GPU 3 fails at 1 s, seen before iteration 2 (two iterations of 0.84 s
  // and snapshot v2 before it), taking out itself alone (replace gpu): its
  // replica is dropped, dp 4 -> 3 at 8 sequences each, and v2 is restored
  // (tests/sim/recovery_test.cpp derives the rest).
  const Result r = cli({"simulate", kData + "small.yaml", "--set", "run.iterations=10", "--set",
                        "faults={snapshot: {every: 2}, replace: gpu, events: [{kind: fail, "
                        "target: gpu, id: 3, at: 1s}]}"});
  INFO(r.out, r.err);
  CHECK(r.status == 0);
  CHECK(r.out.find("(gpu 3 failed; no spare GPU: shrink to dp 3, global batch 24; gain 0 s)") !=
        std::string::npos);
  CHECK(r.out.find("before iteration 2: restore v2 (restart 1 after gpu 3 failed") !=
        std::string::npos);
  CHECK(r.out.find("recovered: fail gpu 3 at iteration 2\n") != std::string::npos);
}

TEST_CASE("simulate moves a failed GPU's host onto a spare node from faults.spares") {
  // The same failure with faults.spares 8: a spare node (GPUs 16-23) beside
  // the job's two. Under faults.replace host (the default) GPU 3's host,
  // node 0, goes out for the repair with it: its 8 ranks (rank r on GPU r)
  // move together onto the spare node, rank r onto GPU 16 + r, the job
  // keeps dp 4 and no re-plan happens; with replace gpu rank 3 alone moves,
  // onto GPU 16. A spare count above the cluster's GPUs is refused.
  const std::string fail = "events: [{kind: fail, target: gpu, id: 3, at: 1s}]}";
  const Result r = cli({"simulate", kData + "small.yaml", "--set", "run.iterations=10", "--set",
                        "faults={snapshot: {every: 2}, spares: 8, " + fail});
  INFO(r.out, r.err);
  CHECK(r.status == 0);
  CHECK(r.out.find("remap rank 3 -> gpu 19 (gpu 3 failed; spare on same rack") !=
        std::string::npos);
  CHECK(r.out.find("remap rank 0 -> gpu 16 (gpu 0 drained with its host; spare on same rack") !=
        std::string::npos);
  CHECK(r.out.find("remap rank 7 -> gpu 23 (gpu 7 drained with its host") != std::string::npos);
  CHECK(r.out.find("remap rank 8 ") == std::string::npos);
  CHECK(r.out.find("shrink") == std::string::npos);
  CHECK(r.out.find("recovered: fail gpu 3 at iteration 2\n") != std::string::npos);
  CHECK(r.out.find("recovered: drain gpu 0 at iteration 2 (host 0 out for repair with gpu 3, "
                   "faults.replace host)\n") != std::string::npos);
  // Without the spare node no replica is left whole (node 0 holds stage 0
  // of all four): the job waits for the repair (faults.repair, 48 h from
  // the failure at 1 s; seen at 1.677 s, 172799.3 s before it is back).
  const Result waits = cli({"simulate", kData + "small.yaml", "--set", "run.iterations=10", "--set",
                            "faults={snapshot: {every: 2}, " + fail});
  INFO(waits.out);
  CHECK(waits.status == 0);
  CHECK(waits.out.find("before iteration 2: gpu 3 failed and 7 GPUs drained with its host; no "
                       "spare GPU and no smaller plan: waiting 172799 s for the repair "
                       "(faults.repair)\n") != std::string::npos);
  const Result alone = cli({"simulate", kData + "small.yaml", "--set", "run.iterations=10", "--set",
                            "faults={snapshot: {every: 2}, spares: 8, replace: gpu, " + fail});
  INFO(alone.out);
  CHECK(alone.status == 0);
  CHECK(alone.out.find("remap rank 3 -> gpu 16 (gpu 3 failed; spare on same rack") !=
        std::string::npos);
  CHECK(alone.out.find("remap rank 0 ") == std::string::npos);
  CHECK(alone.out.find("recovered: fail gpu 3 at iteration 2\n") != std::string::npos);
  const Result bad = cli({"simulate", kData + "small.yaml", "--set", "faults.spares=17"});
  CHECK(bad.status == 2);
  CHECK(bad.err.find("faults.spares (set on the command line): 17 spares, but the cluster has "
                     "16 GPUs") != std::string::npos);
}

TEST_CASE("run --backend sim recovers a killed rank as simulate does, and ends without snapshots") {
  const std::string kill = "faults.events=[{kind: kill, rank: 1, at_iteration: 5}]";
  // Snapshots before iterations 2 and 4: rank 1 dies before 5, v4 is
  // restored and iterations 4 to 9 run: 11 iterations printed, the 11th
  // being iteration 9; the restore is logged before iteration 4.
  const Result r = cli({"run", kData + "small.yaml", "--backend", "sim", "--iterations", "10",
                        "--set", kill, "--snapshot-every", "2"});
  INFO(r.out, r.err);
  CHECK(r.status == 0);
  CHECK(r.out.find("recovered: kill rank 1 at iteration 5; resuming at iteration 4\n") !=
        std::string::npos);
  CHECK(r.out.find("before iteration 4: restore v4") != std::string::npos);
  CHECK(r.out.find("\niteration 9 ") != std::string::npos);
  CHECK(r.out.find("\niteration 10 ") == std::string::npos);
  // Without snapshots nothing can be restored: the run ends, status 1.
  const Result ended =
      cli({"run", kData + "small.yaml", "--backend", "sim", "--iterations", "10", "--set", kill});
  CHECK(ended.status == 1);
  CHECK(ended.out.find("failure: kill rank 1 at iteration 5") != std::string::npos);
  CHECK(ended.out.find("recovered") == std::string::npos);
}
