#include <doctest/doctest.h>

#include "core/compress/compression_spec.hpp"
#include "core/input_error.hpp"
#include "core/plan_json.hpp"
#include "core/scenario/scenario.hpp"

using namespace parashift::core;

namespace {
const char* kBase = R"(
model: {preset: llama2-7b, layers: 16}
cluster:
  device: a100-80gb
  topology: {generator: rail-fat-tree, node: dgx-a100, nodes: 2, tiers: 2}
training: {global_batch: 64, seq_len: 2048}
plan: {tp: 2, pp: 2}
)";
// The same with the preset written by name (`model: llama2-7b`, 32 layers).
const std::string kByName = [] {
  std::string text = kBase;
  const std::string map = "{preset: llama2-7b, layers: 16}";
  return text.replace(text.find(map), map.size(), "llama2-7b");
}();
}  // namespace

TEST_CASE("a scenario reads presets, overrides single model fields and derives dp") {
  const Scenario s = parse_scenario(kBase, std::string(PARASHIFT_SOURCE_DIR) + "/scenarios/x.yaml");
  CHECK(s.name == "x");
  CHECK(s.model.name == "Llama-2 7B");
  CHECK(s.model.layers == 16);  // overridden from the preset's 32
  CHECK(s.model.hidden == 4096);
  CHECK(s.device.name == "a100-80gb");
  CHECK(s.topology.gpu_count() == 16);
  // dp not written: 16 GPUs / (tp 2 * pp 2 * cp 1) = 4.
  CHECK(s.plan.dp == 4);
  CHECK(s.plan.global_batch == 64);
  CHECK(s.run.iterations == 1);
}

TEST_CASE("--set style overrides create and replace fields") {
  const Scenario s =
      parse_scenario(kBase, std::string(PARASHIFT_SOURCE_DIR) + "/scenarios/x.yaml",
                     {"plan.tp=4", "plan.pp=1", "run.iterations=5", "plan.recompute=full"});
  CHECK(s.plan.tp == 4);
  CHECK(s.plan.dp == 4);
  CHECK(s.plan.recompute == Recompute::Full);
  CHECK(s.run.iterations == 5);
}

TEST_CASE("plan.sync and plan.compression are read, and bad values named") {
  const std::string file = std::string(PARASHIFT_SOURCE_DIR) + "/scenarios/x.yaml";
  const Scenario s =
      parse_scenario(kBase, file, {"plan.sync=hierarchical", "plan.compression=topk:0.01"});
  CHECK(s.plan.sync == SyncMode::Hierarchical);
  CHECK(s.plan.compression == parse_compression("topk:0.01"));
  CHECK_THROWS_WITH_AS(parse_scenario(kBase, file, {"plan.compression=powersgd:0"}),
                       doctest::Contains("plan.compression (set on the command line): expected "
                                         "none, powersgd:R"),
                       InputError);
  CHECK_THROWS_WITH_AS(parse_scenario(kBase, file, {"plan.sync=ring"}),
                       doctest::Contains("plan.sync (set on the command line): expected one of "
                                         "flat, hierarchical, delayed, found 'ring'"),
                       InputError);
}

TEST_CASE("plan.recompute_layers is read, and refused without full recompute") {
  const std::string file = std::string(PARASHIFT_SOURCE_DIR) + "/scenarios/x.yaml";
  // 16 layers over pp 2: 8 a stage, 2 of them recomputed.
  const Scenario s =
      parse_scenario(kBase, file, {"plan.recompute=full", "plan.recompute_layers=2"});
  CHECK(s.plan.recompute_layers == 2);
  CHECK(s.plan.full_recompute_share(s.model.layers) == doctest::Approx(0.25));
  CHECK_THROWS_WITH_AS(parse_scenario(kBase, file, {"plan.recompute_layers=2"}),
                       doctest::Contains("plan.recompute_layers (set on the command line): 2 "
                                         "layers recomputed need recompute full, found none"),
                       InputError);
  CHECK_THROWS_WITH_AS(
      parse_scenario(kBase, file, {"plan.recompute=full", "plan.recompute_layers=9"}),
      doctest::Contains("plan.recompute_layers (set on the command line): 9 exceeds the layers "
                        "of a stage (8)"),
      InputError);
  CHECK_THROWS_WITH_AS(
      parse_scenario(kBase, file, {"plan.recompute=full", "plan.recompute_layers=-1"}),
      doctest::Contains("plan.recompute_layers (set on the command line): expected"), InputError);
  // 0, as plan_overrides writes for a plan without it: every layer.
  CHECK(parse_scenario(kBase, file, {"plan.recompute=full", "plan.recompute_layers=0"})
            .plan.full_recompute_share(16) == 1.0);
}

TEST_CASE("plan.dp_shard is read, and refused where it cannot shard") {
  const std::string file = std::string(PARASHIFT_SOURCE_DIR) + "/scenarios/x.yaml";
  // 16 GPUs, tp 2 pp 2: dp 4, sharded over 2, 2 replicas.
  const Scenario s =
      parse_scenario(kBase, file, {"plan.optimizer_sharding=fsdp", "plan.dp_shard=2"});
  CHECK(s.plan.shard_degree() == 2);
  CHECK_THROWS_WITH_AS(
      parse_scenario(kBase, file, {"plan.optimizer_sharding=fsdp", "plan.dp_shard=3"}),
      doctest::Contains("plan.dp_shard (set on the command line): 3 does not divide dp=4"),
      InputError);
  CHECK_THROWS_WITH_AS(parse_scenario(kBase, file, {"plan.dp_shard=2"}),
                       doctest::Contains("plan.dp_shard (set on the command line): sharding over "
                                         "2 ranks needs optimizer_sharding fsdp, found none"),
                       InputError);
}

TEST_CASE("--set refuses to descend into a scalar") {
  CHECK_THROWS_WITH_AS(parse_scenario(kBase, "x.yaml", {"plan.tp.x=1"}),
                       "--set plan.tp.x=1: 'plan.tp' is not a map of fields", InputError);
}

TEST_CASE("fp8 on a device without FP8 tensor cores is refused") {
  CHECK_THROWS_WITH_AS(
      parse_scenario(kBase, std::string(PARASHIFT_SOURCE_DIR) + "/scenarios/x.yaml",
                     {"training.precision=fp8"}),
      doctest::Contains("training.precision (set on the command line): fp8 needs a device"),
      InputError);
}

TEST_CASE("sequence and batch lengths are bounded so simulated times fit in int64 ns") {
  // seq_len 2048 x 1e6 (the mutation check's inflate) fits an int but no simulation.
  const std::string dir = std::string(PARASHIFT_SOURCE_DIR) + "/scenarios/x.yaml";
  const std::string message = dir +
                              ": training.seq_len (set on the command line): expected at most "
                              "16777216 tokens, found 2048000000";
  CHECK_THROWS_WITH_AS(parse_scenario(kBase, dir, {"training.seq_len=2048000000"}), message.c_str(),
                       InputError);
  // 2^24 tokens x 4097 sequences = 68,736,253,952 > 2^36 = 68,719,476,736.
  CHECK_THROWS_WITH_AS(
      parse_scenario(kBase, dir, {"training.seq_len=16777216", "training.global_batch=4097"}),
      doctest::Contains("training.global_batch (set on the command line): global_batch x "
                        "seq_len = 68736253952 tokens a batch; expected at most 68719476736"),
      InputError);
}

TEST_CASE("a typo of a required field is named as unknown, with a did-you-mean") {
  // `global_bach` is one edit from `global_batch`: the reader names the typo
  // where it is written rather than reporting global_batch as missing.
  std::string text = kByName;
  text.replace(text.find("global_batch"), 12, "global_bach");
  CHECK_THROWS_WITH_AS(parse_scenario(text, "x.yaml"),
                       "x.yaml:6:12: training.global_bach: unknown field; did you mean "
                       "'global_batch'?",
                       InputError);
  // An optional field's typo is found by the unknown-field check, with the hint.
  CHECK_THROWS_WITH_AS(
      parse_scenario(kBase, std::string(PARASHIFT_SOURCE_DIR) + "/scenarios/x.yaml",
                     {"plan.micro_bach=2"}),
      doctest::Contains("plan.micro_bach (set on the command line): unknown field (did you mean "
                        "'micro_batch'? expected one of:"),
      InputError);
}

TEST_CASE("the unknown-preset error lists each preset once") {
  // The scenario's own models/ folder is the shipped one here: both are searched.
  try {
    parse_scenario(kBase, std::string(PARASHIFT_SOURCE_DIR) + "/scenarios/x.yaml", {"model=gpt-9"});
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    const std::string what = e.what();
    CHECK(what.find("unknown model preset 'gpt-9' (known: bloom-176b, gpt3-175b,") !=
          std::string::npos);
    const auto first = what.find("llama3-70b");
    REQUIRE(first != std::string::npos);
    CHECK(what.find("llama3-70b", first + 1) == std::string::npos);
    // ... and the folder searched is named once, not as two.
    CHECK(what.find("; looked in " + std::string(PARASHIFT_SOURCE_DIR) + "/scenarios/models)") !=
          std::string::npos);
  }
}

TEST_CASE("--set model.FIELD on a preset written by name overrides that field") {
  const Scenario s = parse_scenario(
      kByName, std::string(PARASHIFT_SOURCE_DIR) + "/scenarios/x.yaml", {"model.layers=40"});
  CHECK(s.model.layers == 40);    // the override
  CHECK(s.model.hidden == 4096);  // the rest from the preset
  CHECK(s.model.name == "Llama-2 7B");
}

TEST_CASE("plan_optional: no plan section, or a plan that no longer fits, is not an error") {
  const std::string dir = std::string(PARASHIFT_SOURCE_DIR) + "/scenarios/x.yaml";
  ScenarioOptions lenient;
  lenient.plan_optional = true;
  const std::string no_plan = kByName.substr(0, kByName.find("plan:"));
  CHECK_THROWS_WITH_AS(parse_scenario(no_plan, "x.yaml"), doctest::Contains("plan: missing"),
                       InputError);
  const Scenario s = parse_scenario(no_plan, dir, {}, lenient);
  CHECK_FALSE(s.has_plan);
  CHECK(s.plan_problem.empty());
  // dp 4 was written for 16 GPUs; at 4 nodes (32 GPUs) it no longer fits.
  const Scenario grown =
      parse_scenario(kBase, dir, {"plan.dp=4", "cluster.topology.nodes=4"}, lenient);
  CHECK(grown.has_plan);
  CHECK(grown.topology.gpu_count() == 32);
  CHECK(grown.plan_problem.find("differs from the cluster's 32 GPUs") != std::string::npos);
  // Strict loading still refuses it; field errors are refused either way.
  CHECK_THROWS_AS(parse_scenario(kBase, dir, {"plan.dp=4", "cluster.topology.nodes=4"}),
                  InputError);
  CHECK_THROWS_WITH_AS(parse_scenario(kBase, dir, {"plan.tpp=2"}, lenient),
                       doctest::Contains("plan.tpp (set on the command line): unknown field"),
                       InputError);
}

TEST_CASE("cluster.truth: factors on the preset, read and applied, bad ones are located") {
  const std::string file = std::string(PARASHIFT_SOURCE_DIR) + "/scenarios/x.yaml";
  const Scenario preset = parse_scenario(kBase, file);
  CHECK(preset.truth.is_preset());
  const Scenario s = parse_scenario(
      kBase, file, {"cluster.truth.gemm_efficiency=0.8", "cluster.truth.inter_node_bandwidth=0.5"});
  CHECK(s.truth.gemm_efficiency == 0.8);
  CHECK(s.truth.inter_node_bandwidth == 0.5);
  CHECK(s.truth.describe() == "gemm_efficiency 0.8x, inter_node_bandwidth 0.5x");
  // The policy's device is the preset; the truth's GEMM ceiling is 0.8x it.
  CHECK(s.device.efficiency.gemm_max == preset.device.efficiency.gemm_max);
  CHECK(s.truth.device(s.device).efficiency.gemm_max ==
        doctest::Approx(0.8 * preset.device.efficiency.gemm_max));
  // Links: a GPU's NVLink (both ends in one host) keeps its rate, a link
  // that leaves the host (NIC to leaf) runs at half.
  const auto t = s.truth.topology(s.topology);
  int intra = 0, inter = 0;
  for (int e = 0; e < t.link_count(); ++e) {
    const int a = t.node(t.link(e).src).host, b = t.node(t.link(e).dst).host;
    const double ratio = t.link(e).bandwidth_Bps / s.topology.link(e).bandwidth_Bps;
    if (a >= 0 && a == b) {
      CHECK(ratio == 1.0);
      ++intra;
    } else {
      CHECK(ratio == doctest::Approx(0.5));
      ++inter;
    }
  }
  CHECK(intra > 0);
  CHECK(inter > 0);
  CHECK_THROWS_WITH_AS(parse_scenario(kBase, file, {"cluster.truth.gemm=0.8"}),
                       doctest::Contains("cluster.truth.gemm"), InputError);
  CHECK_THROWS_WITH_AS(parse_scenario(kBase, file, {"cluster.truth.memory_efficiency=0"}),
                       doctest::Contains("expected a positive number, found '0'"), InputError);
  CHECK_THROWS_WITH_AS(parse_scenario(kBase, file, {"cluster.truth.memory_efficiency=12"}),
                       doctest::Contains("expected a factor on the preset in (0, 10], found 12"),
                       InputError);
}

TEST_CASE("cluster.nccl_algo: NCCL_ALGO for every command, auto unless set") {
  const std::string file = std::string(PARASHIFT_SOURCE_DIR) + "/scenarios/x.yaml";
  CHECK(parse_scenario(kBase, file).nccl_algo == NcclAlgo::Auto);
  CHECK(parse_scenario(kBase, file, {"cluster.nccl_algo=tree"}).nccl_algo == NcclAlgo::Tree);
  CHECK(parse_scenario(kBase, file, {"cluster.nccl_algo=ring"}).nccl_algo == NcclAlgo::Ring);
  CHECK_THROWS_WITH_AS(parse_scenario(kBase, file, {"cluster.nccl_algo=Ring"}),
                       doctest::Contains("cluster.nccl_algo (set on the command line): expected "
                                         "auto, ring, tree or nvls, got 'Ring'"),
                       InputError);
}

TEST_CASE("cluster.groups: devices by node range in host order, bad groups located") {
  const std::string file = std::string(PARASHIFT_SOURCE_DIR) + "/scenarios/x.yaml";
  // kBase's cluster has 2 dgx-a100 nodes of 8 GPUs: one H100 node, one A100 node.
  std::string text = kBase;
  const std::string device = "  device: a100-80gb\n";
  text.replace(text.find(device), device.size(),
               "  groups: [{device: h100-sxm-80gb, nodes: 1}, {device: a100-80gb, nodes: 1}]\n");
  const Scenario s = parse_scenario(text, file);
  CHECK(s.device.name == "h100-sxm-80gb");  // the first group's: the cost model's reference
  REQUIRE(s.device_groups.size() == 2);
  CHECK(s.device_groups[1].device.name == "a100-80gb");
  CHECK(s.device_groups[1].first_gpu == 8);
  CHECK(s.device_groups[1].gpus == 8);
  CHECK(describe_devices(s.device_groups, s.device, 16) == "8 x h100-sxm-80gb + 8 x a100-80gb");
  CHECK(parse_scenario(kBase, file).device_groups.empty());

  // device and groups both written: which one is meant is unclear.
  CHECK_THROWS_WITH_AS(
      parse_scenario(text, file, {"cluster.device=a100-80gb"}),
      doctest::Contains(
          "cluster.device (set on the command line): expected one of device or groups"),
      InputError);
  // A group's unknown device, a count that is no positive integer, nodes
  // that do not add up to the topology's 2, a group that is not a map.
  auto fails = [&](const std::string& value, const char* what) {
    CAPTURE(value);
    CHECK_THROWS_WITH_AS(parse_scenario(text, file, {"cluster.groups=" + value}),
                         doctest::Contains(what), InputError);
  };
  fails("[{device: h100-sxm-80gb, nodes: 1}, {device: a200, nodes: 1}]",
        "cluster.groups[1].device");
  fails("[{device: h100-sxm-80gb, nodes: 0}, {device: a100-80gb, nodes: 2}]",
        "cluster.groups[0].nodes");
  fails("[{device: h100-sxm-80gb, nodes: 1}, {device: a100-80gb, nodes: 2}]",
        "the groups hold 3 nodes; expected the topology's 2");
  fails("[h100-sxm-80gb]", "expected a map {device: PRESET, nodes: N}");
  fails("[]", "cluster.groups (set on the command line): expected a list of {device, nodes} maps");
  fails("[{device: h100-sxm-80gb, nodes: 2, speed: 1}]", "speed");
}

TEST_CASE("a plan's overrides make the scenario's plan that plan") {
  // scenarios/default.yaml runs tp8 pp4 dp8 v5 interleaved, selective
  // recompute, the distributed optimizer, global batch 512 on 256 GPUs. The
  // overrides of another plan of those GPUs (tp2 pp4 dp32, 1F1B, no
  // recompute, ZeRO-1 off, int8 hierarchical sync, global batch 1024) read
  // back as exactly it: every field round-trips through its spelling.
  const std::string file = std::string(PARASHIFT_SOURCE_DIR) + "/scenarios/default.yaml";
  Scenario base = load_scenario(file);
  ParallelPlan other = base.plan;
  other.tp = 2;
  other.pp = 4;
  other.dp = 32;
  other.virtual_stages = 1;
  other.schedule = Schedule::OneFOneB;
  other.recompute = Recompute::None;
  other.optimizer_sharding = OptimizerSharding::None;
  other.sync = SyncMode::Hierarchical;
  other.compression = parse_compression("int8");
  other.global_batch = 1024;
  REQUIRE(other.label() != base.plan.label());
  const Scenario again = load_scenario(file, plan_overrides(other));
  CHECK(again.plan.label() == other.label());
  CHECK(again.plan.global_batch == 1024);
  CHECK(again.plan.sync == SyncMode::Hierarchical);
  CHECK(to_string(again.plan.compression) == to_string(other.compression));  // "int8:256"
  CHECK(again.plan.order == other.order);
  CHECK(again.plan.sequence_parallel == other.sequence_parallel);
}

TEST_CASE("training.text: resolved against the scenario's directory, a missing file named") {
  const std::string file = std::string(PARASHIFT_SOURCE_DIR) + "/scenarios/x.yaml";
  CHECK(parse_scenario(kBase, file).training.text.empty());  // the synthetic data
  const Scenario s =
      parse_scenario(kBase, file, {"training.text=../tests/data/text/coriolanus-1.txt"});
  CHECK(s.training.text == std::string(PARASHIFT_SOURCE_DIR) + "/tests/data/text/coriolanus-1.txt");
  CHECK_THROWS_WITH_AS(
      parse_scenario(kBase, file, {"training.text=no-such.txt"}),
      doctest::Contains(("training.text (set on the command line): expected a readable text file, "
                         "found no file at '" +
                         std::string(PARASHIFT_SOURCE_DIR) + "/scenarios/no-such.txt'")
                            .c_str()),
      InputError);
}
