// `parashift collectives`: nccl-tests' columns from the NCCL model, JSON
// rows, and one clear line with exit status 2 for bad input.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

using parashift::test::run_parashift;

namespace {

int lines_of(const std::string& text) {
  int n = 0;
  for (const char c : text) n += c == '\n';
  return n;
}

// Each `bad` case after `prefix`: exit 2 and one line holding its `names` entry.
void check_bad(const std::vector<std::string>& prefix,
               const std::vector<std::vector<std::string>>& bad,
               const std::vector<std::string>& names) {
  for (std::size_t i = 0; i < bad.size(); ++i) {
    std::vector<std::string> args = prefix;
    args.insert(args.end(), bad[i].begin(), bad[i].end());
    const auto r = run_parashift(args);
    INFO("case ", i, ": ", r.err);
    CHECK(r.status == 2);
    CHECK(lines_of(r.err) == 1);
    CHECK(r.err.find(names[i]) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("collectives: an 8-GPU H100 node sweep prints one row per size") {
  const auto r = run_parashift({"collectives", "--topology", "dgx-h100", "--op", "all_reduce", "-b",
                                "1M", "-e", "8G", "-f", "2"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  // 1 MiB .. 8 GiB doubling: 14 sizes, after 3 header lines.
  CHECK(lines_of(r.out) == 3 + 14);
  CHECK(r.out.find("on 8 ranks (1 nodes x 8 GPUs)") != std::string::npos);
  // 8 GiB on NVLink SHARP: algbw 0.61 x 450 = 274.5 GB/s (plus 25 us), busbw
  // 8 GiB / 31.319 ms = 274.27 GB/s x 1.75 = 479.98 GB/s.
  CHECK(r.out.find("8589934592") != std::string::npos);
  CHECK(r.out.find("479.98") != std::string::npos);
  CHECK(r.out.find("nvls/Simple") != std::string::npos);
}

TEST_CASE("collectives: --algo ring and --json rows") {
  const std::string json = parashift::test::temp_file_path("collectives_test.json");
  const auto r = run_parashift({"collectives", "--topology", "rail-fat-tree", "--param", "nodes=2",
                                "--op", "all_reduce", "--nodes", "2", "--gpus-per-node", "8", "-b",
                                "1G", "-e", "2G", "--algo", "ring", "--json", json});
  INFO(r.err);
  REQUIRE(r.status == 0);
  std::ifstream in(json);
  const nlohmann::json rows = nlohmann::json::parse(in);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0]["op"] == "all_reduce");
  CHECK(rows[0]["bytes"] == 1073741824.0);
  CHECK(rows[0]["algo"] == "ring");
  // 16 ranks on 2 nodes, ring Simple: busbw min(0.82 x 450, 8 x 50 x 0.94)
  // = 369 GB/s less the latency: 8.4 + 28 x 3.4 (intra) + 2 x 14 us = 131.6 us
  // on a 5.45 ms bandwidth term -> ~360 GB/s.
  const double busbw = rows[0]["busbw_GBps"];
  CHECK(busbw == doctest::Approx(360.3).epsilon(0.005));
  CHECK(rows[1]["time_us"].get<double>() > rows[0]["time_us"].get<double>());
  std::remove(json.c_str());
}

TEST_CASE("collectives: bad input is one line naming the option, exit 2") {
  const std::vector<std::vector<std::string>> bad = {
      {"--op", "all_reduce", "-b", "8G", "-e", "1M"},  // sizes out of order
      {"--op", "all_reduce", "-b", "0"},               // zero size
      {"--op", "all_reduce", "-e", "12Q"},             // not a size
      {"--op", "broadcast"},                           // unknown op
      {"--op", "all_reduce", "--algo", "collnet"},     // unknown algorithm
      {"--op", "all_reduce", "-f", "1"},               // factor < 2
      {"--op", "all_reduce", "--nodes", "4"},          // nodes without gpus-per-node
      {"--op", "all_reduce", "--ranks", "-3"},         // negative ranks
      {"--op", "sendrecv", "--ranks", "8"},            // send/recv needs 2 ranks
      // An algorithm the collective has not, once silently run as a ring:
      {"--op", "all_gather", "--algo", "nvls"},                // NVLS: all_reduce only
      {"--op", "reduce_scatter", "--algo", "tree"},            // tree: all_reduce only
      {"--op", "sendrecv", "--ranks", "2", "--algo", "ring"},  // point-to-point
  };
  const std::vector<std::string> names = {
      "-b 8G",
      "-b 0",
      "-e 12Q",
      "--op broadcast",
      "--algo collnet",
      "-f 1",
      "--nodes",
      "--ranks",
      "--op sendrecv",
      "--algo nvls --op all_gather: nvls runs all_reduce only in this model (use --algo auto or "
      "ring)",
      "--algo tree --op reduce_scatter: tree runs all_reduce only",
      "--algo ring --op sendrecv: point-to-point operations"};
  check_bad({"collectives", "--topology", "dgx-h100"}, bad, names);
  // NVLS on A100s, which have no NVLink SHARP.
  const auto a100 = run_parashift({"collectives", "--topology", "dgx-a100", "--device", "a100-80gb",
                                   "--op", "all_reduce", "--algo", "nvls"});
  CHECK(a100.status == 2);
  CHECK(a100.err.find("nvls needs NVLink SHARP") != std::string::npos);
}

TEST_CASE("collectives: --backend sim runs the same model on the max-min network") {
  // Alone on a non-blocking two-node fat-tree the simulated rows equal the
  // closed form's; with 4:1 oversubscribed spines and 16 nodes in leaf
  // groups of 8 the node-crossing ring hops share spine uplinks and the
  // simulated all-reduce is slower.
  auto rows_of = [](const std::vector<std::string>& extra) {
    const std::string json = parashift::test::temp_file_path("collectives_sim.json");
    std::vector<std::string> args = {
        "collectives", "--topology", "rail-fat-tree", "--op", "all_reduce", "-b", "1G",
        "-e",          "1G",         "--json",        json};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = run_parashift(args);
    INFO(r.err);
    REQUIRE(r.status == 0);
    std::ifstream in(json);
    const nlohmann::json rows = nlohmann::json::parse(in);
    std::remove(json.c_str());
    return rows;
  };
  const auto analytical = rows_of({"--param", "nodes=2"});
  const auto simulated = rows_of({"--param", "nodes=2", "--backend", "sim"});
  CHECK(simulated[0]["time_us"].get<double>() ==
        doctest::Approx(analytical[0]["time_us"].get<double>()).epsilon(1e-6));
  const std::vector<std::string> spine = {
      "--param", "nodes=16", "--param", "oversubscription=4", "--param", "leaf_radix=16"};
  auto spine_sim = spine;
  spine_sim.insert(spine_sim.end(), {"--backend", "sim"});
  CHECK(rows_of(spine_sim)[0]["time_us"].get<double>() >
        1.5 * rows_of(spine)[0]["time_us"].get<double>());
}

TEST_CASE("collectives --backend hw: bad input is one line naming the option, exit 2") {
  // The measured sweep runs over the ranks mpirun started: here one (an MPI
  // singleton), which is too few; the group, model and algorithm options
  // belong to the model's backends.
  const std::vector<std::vector<std::string>> bad = {
      {"--op", "all_reduce"},
      {"--op", "alltoall"},
      {"--op", "all_reduce", "--topology", "dgx-h100"},
      {"--op", "all_reduce", "--algo", "ring"},
      {"--op", "all_reduce", "-n", "0"},
  };
  const std::vector<std::string> names = {
      "--backend hw: a collective needs at least 2 ranks; launch the command with mpirun -np N",
      "--backend hw --op alltoall: runs all_reduce, all_gather and reduce_scatter",
      "--backend hw: measures the collective over the ranks mpirun started; give no SCENARIO, "
      "--topology",
      "--backend hw: measures the collective over the ranks mpirun started", "--iters"};
  check_bad({"collectives", "--backend", "hw"}, bad, names);
}

TEST_CASE("collectives: a scenario's cluster.nccl_algo pins the fabric, --algo overrides it") {
  // scenarios/shared-links.yaml pins rings (cluster.nccl_algo: ring). 64 MiB
  // over its 16 nodes: the all-reduce runs as a ring; --algo tree overrides
  // the pin. Send/recv has no algorithm to pin: it runs, as NCCL_ALGO=Ring
  // leaves point-to-point alone, instead of refusing an --algo never given.
  const std::string scenario = std::string(PARASHIFT_SOURCE_DIR) + "/scenarios/shared-links.yaml";
  const auto pinned =
      run_parashift({"collectives", scenario, "--op", "all_reduce", "-b", "64M", "-e", "64M"});
  INFO(pinned.err);
  REQUIRE(pinned.status == 0);
  CHECK(pinned.out.find("--algo auto (cluster.nccl_algo ring)") != std::string::npos);
  CHECK(pinned.out.find(" ring/") != std::string::npos);
  const auto tree = run_parashift(
      {"collectives", scenario, "--op", "all_reduce", "-b", "64M", "-e", "64M", "--algo", "tree"});
  REQUIRE(tree.status == 0);
  CHECK(tree.out.find(" tree/") != std::string::npos);
  const auto p2p = run_parashift(
      {"collectives", scenario, "--op", "sendrecv", "--ranks", "2", "-b", "1M", "-e", "1M"});
  INFO(p2p.err);
  CHECK(p2p.status == 0);
}
