#include <doctest/doctest.h>

#include <string>

#include "core/input_error.hpp"
#include "core/planner/plan_pins.hpp"

using namespace parashift::core;

namespace {

std::string error_of(const std::string& item) {
  try {
    PlanPins pins;
    set_pin(pins, item);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("pins: plan. prefix and bare keys set the same field") {
  const PlanPins pins = parse_pins({"plan.tp=8", "pp=4", "schedule=interleaved_1f1b",
                                    "sequence_parallel=true", "optimizer_sharding=fsdp"});
  CHECK(pins.tp == 8);
  CHECK(pins.pp == 4);
  CHECK(pins.schedule == Schedule::Interleaved1F1B);
  CHECK(pins.sequence_parallel == true);
  CHECK(pins.optimizer_sharding == OptimizerSharding::Fsdp);
  CHECK_FALSE(pins.dp.has_value());
  CHECK(describe(pins) ==
        "tp=8 pp=4 schedule=interleaved_1f1b sequence_parallel=true optimizer_sharding=fsdp");
  CHECK(describe(PlanPins{}) == "none");
}

TEST_CASE("pins: matches() checks only the pinned fields") {
  PlanPins pins;
  pins.tp = 8;
  pins.recompute = Recompute::Full;
  ParallelPlan plan;
  plan.tp = 8;
  plan.pp = 3;
  plan.recompute = Recompute::Full;
  CHECK(pins.matches(plan));
  plan.recompute = Recompute::None;
  CHECK_FALSE(pins.matches(plan));
}

TEST_CASE("pins: bad keys and values name the key") {
  CHECK(error_of("tp=eight").find("--pin tp: expected an integer >= 1, found 'eight'") == 0);
  CHECK(error_of("pp=0").find("--pin pp:") == 0);
  CHECK(error_of("tp=8x").find("--pin tp:") == 0);
  CHECK(error_of("schedule=zigzag").find("--pin schedule: expected one of gpipe") == 0);
  CHECK(error_of("sequence_parallel=maybe").find("--pin sequence_parallel:") == 0);
  CHECK(error_of("bogus=1").find("--pin: unknown key 'bogus'; expected one of tp, pp") == 0);
  CHECK(error_of("tp").find("--pin: expected KEY=VALUE") == 0);
}
