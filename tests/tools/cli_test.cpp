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
      {{"simulate", kData + "small.yaml", "--set", "run.network=path", "--links", "/tmp/x.csv"},
       "--links needs the max-min network"},
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

TEST_CASE("under a launcher only the first rank reports a bad input; every rank exits 2") {
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
  for (const char* sub : {"simulate", "plan", "validate", "topo"}) {
    const Result h = cli({sub, "--help"});
    INFO(sub);
    CHECK(h.status == 0);
    CHECK(h.out.find("Usage") != std::string::npos);
  }
}
