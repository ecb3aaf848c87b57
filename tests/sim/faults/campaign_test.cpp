// The campaign through the `parashift faults` command (in-process).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "../../tools/cli_harness.hpp"

namespace fs = std::filesystem;
using parashift::test::run_parashift;

namespace {

// Llama-3 70B on 256 H100s (32 DGX hosts), racks of 4 hosts, replicas on
// the next host of the same rack (domain node), so host 1 keeps host 0's.
const char* kScenario = R"(name: faults-small
model: llama3-70b
cluster:
  device: h100-sxm-80gb
  topology: {generator: rail-fat-tree, node: dgx-h100, nodes: 32, tiers: 2, oversubscription: 1}
training: {global_batch: 512, seq_len: 8192}
plan: {tp: 8, pp: 4, dp: 8, virtual_stages: 5, schedule: interleaved_1f1b, recompute: selective,
       sequence_parallel: true, optimizer_sharding: distributed}
run: {seed: 7}
faults:
  gpu_mtbf_hours: 2000
  node_mtbf_hours: 4000
  nic_mtbf_hours: 8000
  link_mtbf_hours: 20000
  link_flap: {probability: 0.5, flaps: 2, period: 1min}
  heartbeat_timeout: 10s
  spares: 16
  hosts_per_rack: 4
  days: 2
  snapshot: {interval: auto, replicas: 2, domain: node}
  baseline: {checkpoint_interval: 20min, storage_gbps: 800, restart: 5min}
)";

fs::path write_file(const std::string& name, const std::string& text) {
  const fs::path dir = fs::temp_directory_path() / "parashift-faults-test";
  fs::create_directories(dir);
  const fs::path file = dir / name;
  std::ofstream(file) << text;
  return file;
}

std::string read_file(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("a campaign reports ETTR per policy, and the same seed gives identical JSON") {
  const fs::path scenario = write_file("small.yaml", kScenario);
  const fs::path j1 = scenario.parent_path() / "a.json";
  const fs::path j2 = scenario.parent_path() / "b.json";
  const auto a =
      run_parashift({"faults", scenario.string(), "--seeds", "3", "--json", j1.string()});
  REQUIRE_MESSAGE(a.status == 0, a.err);
  CHECK(a.err.empty());  // no progress bar when stderr is not a terminal
  CHECK(a.out.find("snapshot") != std::string::npos);
  CHECK(a.out.find("baseline") != std::string::npos);
  const auto b =
      run_parashift({"faults", scenario.string(), "--seeds", "3", "--json", j2.string()});
  REQUIRE(b.status == 0);
  CHECK(read_file(j1) == read_file(j2));
  CHECK(a.out == b.out);

  const auto json = nlohmann::json::parse(read_file(j1));
  const double snap = json["policies"]["snapshot"]["ettr"]["p50"];
  const double base = json["policies"]["baseline"]["ettr"]["p50"];
  CHECK(snap > base);
  CHECK(snap <= 1.0);
  CHECK(json["failures"].get<long long>() > 0);
  CHECK(json["policies"]["snapshot"]["state_losses"] == 0);
}

TEST_CASE("a double failure before re-replication loses state and falls back to the checkpoint") {
  const fs::path scenario = write_file("small2.yaml", kScenario);
  // Host 0 dies, then host 1 (which keeps host 0's only replica) 1 s later,
  // before anything is re-replicated.
  const fs::path trace = write_file("double.csv", "time_s,kind,target\n3000,node,0\n3001,node,1\n");
  const fs::path out = scenario.parent_path() / "double.json";
  const auto r = run_parashift({"faults", scenario.string(), "--seeds", "1", "--trace",
                                trace.string(), "--json", out.string()});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(r.out.find("training state lost: every replica of rank") != std::string::npos);
  const auto json = nlohmann::json::parse(read_file(out));
  CHECK(json["policies"]["snapshot"]["state_losses"] == 1);
  CHECK(json["policies"]["snapshot"]["interruptions"] == 2);

  // One node alone: its replica on host 1 survives; nothing is lost.
  const fs::path single = write_file("single.csv", "time_s,kind,target\n3000,node,0\n");
  const auto s = run_parashift({"faults", scenario.string(), "--seeds", "1", "--trace",
                                single.string(), "--json", out.string()});
  REQUIRE(s.status == 0);
  const auto one = nlohmann::json::parse(read_file(out));
  CHECK(one["policies"]["snapshot"]["state_losses"] == 0);
  // Recovery onto a spare: 10 s heartbeat + 20 s reinit + restore transfer.
  const double recovery = one["policies"]["snapshot"]["recovery_s"]["max"];
  CHECK(recovery > 30.0);
  CHECK(recovery < 60.0);
  // Lost work at most one snapshot interval plus its replication window.
  const double interval = one["snapshot"]["interval_s"];
  const double replication = one["snapshot"]["replication_s"];
  CHECK(one["policies"]["snapshot"]["lost_work_s"]["max"].get<double>() <= interval + replication);
}

TEST_CASE("bad trace rows name the file and row, exit 2") {
  const fs::path scenario = write_file("small3.yaml", kScenario);
  const fs::path trace = write_file("bad.csv", "time_s,kind,target\n10,gpu,3\n20,gpu,99999\n");
  const auto r = run_parashift({"faults", scenario.string(), "--trace", trace.string()});
  CHECK(r.status == 2);
  CHECK(r.err.find("bad.csv:3: target: expected a gpu index") != std::string::npos);
  CHECK(r.err.find('\n') == r.err.size() - 1);  // one line

  const fs::path t2 = write_file("bad2.csv", "time_s,kind,target\nsoon,gpu,3\n");
  const auto r2 = run_parashift({"faults", scenario.string(), "--trace", t2.string()});
  CHECK(r2.status == 2);
  CHECK(r2.err.find("bad2.csv:2: time_s") != std::string::npos);

  const fs::path t3 = write_file("bad3.csv", "time_s,kind,target\n5,rack,3\n");
  const auto r3 = run_parashift({"faults", scenario.string(), "--trace", t3.string()});
  CHECK(r3.status == 2);
  CHECK(r3.err.find("bad3.csv:2: kind: expected one of gpu, node, nic, link") != std::string::npos);
}

TEST_CASE("bad fault config exits 2 with the field and what was expected") {
  std::string text = kScenario;
  text.replace(text.find("heartbeat_timeout: 10s"), 22, "heartbeat_timeout: 10");
  const fs::path scenario = write_file("bad.yaml", text);
  const auto r = run_parashift({"faults", scenario.string(), "--seeds", "1"});
  CHECK(r.status == 2);
  CHECK(r.err.find("faults.heartbeat_timeout") != std::string::npos);
  CHECK(r.err.find("expected a duration") != std::string::npos);

  const auto o = run_parashift(
      {"faults", write_file("ok.yaml", kScenario).string(), "--set", "faults.spares=-1"});
  CHECK(o.status == 2);
  CHECK(o.err.find("faults.spares (set on the command line)") != std::string::npos);

  // A scenario without a faults: section.
  const auto n =
      run_parashift({"faults", std::string(PARASHIFT_SOURCE_DIR) + "/tests/tools/data/small.yaml"});
  CHECK(n.status == 2);
  CHECK(n.err.find("faults: missing") != std::string::npos);
}
