#include <doctest/doctest.h>

#include "core/input_error.hpp"
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
