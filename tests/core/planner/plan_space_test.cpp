#include <doctest/doctest.h>

#include <set>
#include <string>

#include "core/planner/plan_space.hpp"
#include "fixtures.hpp"

using namespace parashift::core;

namespace {

// The tiny model (4 layers, 4 heads) on one node of 8 GPUs, global batch 8,
// sequence 128.
PlanSpaceInput tiny_space(const PlanPins& pins) {
  PlanSpaceInput in;
  in.gpus = 8;
  in.gpus_per_node = 8;
  in.global_batch = 8;
  in.seq_len = 128;
  in.pins = pins;
  return in;
}

}  // namespace

TEST_CASE("plan space: hand count with cp, micro_batch, recompute, sp and sharding pinned") {
  PlanPins pins;
  pins.cp = 1;
  pins.micro_batch = 1;
  pins.recompute = Recompute::None;
  pins.sequence_parallel = false;
  pins.optimizer_sharding = OptimizerSharding::None;
  // tp divides 4 heads and 8 GPUs: {1, 2, 4}. pp divides 8/tp, pp <= 4 layers;
  // dp = 8/(tp pp) and m = 8/dp micro-batches. With pp == 1 one plan (1f1b);
  // with pp > 1 gpipe, 1f1b, zb_h1, plus interleaved v = 2 when
  // 4 % (2 pp) == 0 and m % pp == 0.
  //   tp1: pp1 dp8 -> 1; pp2 dp4 m2 -> 3 + v2 = 4; pp4 dp2 m4 -> 3 (4/(4*2) no) = 8
  //   tp2: pp1 dp4 -> 1; pp2 dp2 m4 -> 4;          pp4 dp1 m8 -> 3            = 8
  //   tp4: pp1 dp2 -> 1; pp2 dp1 m8 -> 4                                      = 5
  // 8 + 8 + 5 = 21.
  const PlanSpace space(test::tiny_model(), tiny_space(pins));
  CHECK(space.count() == 21);
}

TEST_CASE("plan space: hand count with tp and pp pinned") {
  PlanPins pins;
  pins.tp = 4;
  pins.pp = 1;
  // cp in {1, 2, 4, 8, 16} with 128 % (2 cp) == 0, but tp*cp must divide 8: {1, 2}.
  //   cp1: dp = 2; micro_batch divides 8/2: {1, 2, 4}; 3 recompute x 2 sp
  //        (tp > 1) x 3 sharding = 3 * 3 * 2 * 3 = 54
  //   cp2: dp = 1; micro_batch in {1, 2, 4, 8}; sharding only none with
  //        dp == 1: 4 * 3 * 2 * 1 = 24
  // pp == 1 keeps one schedule (1f1b). 54 + 24 = 78.
  const PlanSpace space(test::tiny_model(), tiny_space(pins));
  CHECK(space.count() == 78);
}

TEST_CASE("plan space: every plan is valid, distinct and in the same order each time") {
  const ModelSpec model = test::tiny_model();
  const PlanSpaceInput in = tiny_space({});
  const PlanSpace space(model, in);
  std::set<std::string> labels;
  std::vector<std::string> order;
  space.for_each([&](const ParallelPlan& plan) {
    const auto problems = plan.problems(model, in.seq_len, in.gpus);
    INFO(plan.label());
    CHECK(problems.empty());
    CHECK(plan.tp <= in.gpus_per_node);
    labels.insert(plan.label());
    order.push_back(plan.label());
  });
  CHECK(static_cast<std::int64_t>(labels.size()) == space.count());
  std::vector<std::string> again;
  space.for_each([&](const ParallelPlan& plan) { again.push_back(plan.label()); });
  CHECK(again == order);
}

TEST_CASE("plan space: a pin the model cannot take leaves it empty") {
  PlanPins pins;
  pins.tp = 3;  // does not divide 4 heads
  CHECK(PlanSpace(test::tiny_model(), tiny_space(pins)).count() == 0);
  PlanPins sp_without_tp;
  sp_without_tp.tp = 1;
  sp_without_tp.sequence_parallel = true;  // sequence parallelism needs tp > 1
  CHECK(PlanSpace(test::tiny_model(), tiny_space(sp_without_tp)).count() == 0);
}

TEST_CASE("plan space: a pinned schedule is kept where the canonical form would drop it") {
  PlanPins pins;
  pins.tp = 1;
  pins.pp = 1;
  pins.cp = 1;
  pins.micro_batch = 1;
  pins.recompute = Recompute::None;
  pins.sequence_parallel = false;
  pins.optimizer_sharding = OptimizerSharding::None;
  pins.schedule = Schedule::GPipe;
  // tp1 pp1 cp1 -> dp 8, m 1: one plan, with gpipe although pp == 1.
  const PlanSpace space(test::tiny_model(), tiny_space(pins));
  CHECK(space.count() == 1);
  space.for_each([](const ParallelPlan& p) { CHECK(p.schedule == Schedule::GPipe); });
}

TEST_CASE("plan space: FSDP across nodes also comes sharded within a node (HSDP)") {
  PlanPins pins;
  pins.tp = 1;
  pins.pp = 1;
  pins.cp = 1;
  pins.micro_batch = 1;
  pins.recompute = Recompute::None;
  pins.sequence_parallel = false;
  pins.optimizer_sharding = OptimizerSharding::Fsdp;
  PlanSpaceInput in = tiny_space(pins);
  in.gpus = 16;  // two nodes of 8: dp 16, 8 data-parallel ranks a node
  in.global_batch = 16;
  std::vector<ParallelPlan> plans;
  PlanSpace(test::tiny_model(), in).for_each([&](const ParallelPlan& p) { plans.push_back(p); });
  // FSDP over all 16, then HSDP sharded over each node's 8 (2 replicas).
  REQUIRE(plans.size() == 2);
  CHECK(plans[0].dp_shard == 0);
  CHECK(plans[1].dp_shard == 8);
  CHECK(plans[1].problems(test::tiny_model(), 128, 16).empty());
  // On one node there is nothing to replicate across: FSDP alone.
  in.gpus = 8;
  in.global_batch = 8;
  CHECK(PlanSpace(test::tiny_model(), in).count() == 1);
}
