// The switch cost of a live re-plan (core/cost/replan_cost.hpp): what moves,
// and what costs nothing.
#include <doctest/doctest.h>

#include "core/cost/replan_cost.hpp"
#include "test_models.hpp"

using namespace parashift::core;

TEST_CASE("a change of tp, pp or dp fetches the new shard of weights and optimizer state") {
  const ModelSpec m = test::gpt3_175b();
  ParallelPlan from = test::plan_175b();  // tp8 pp8 dp4
  from.optimizer_sharding = OptimizerSharding::Distributed;
  ParallelPlan to = from;
  to.pp = 4;
  to.dp = 8;
  // The new plan's first stage: 96 / 4 = 24 layers of 1/8 of each layer's
  // parameters, plus 1/8 of the 51200 x 12288 embedding. Weights in BF16
  // (2 bytes a parameter), Adam's FP32 master and moments (12) over dp 8;
  // gradients are not fetched (zero after the step).
  const double params = 24 * m.layer_params() / 8 + 51200.0 * 12288 / 8;
  const double bytes = 2 * params + 12 * params / 8;
  // At 50 GB/s per GPU and 1 us latency, plus a 20 s rebuild.
  auto fetch = [](double b) { return transfer_ns(b, 50e9) + 1000; };
  const ReplanCost c = replan_cost(m, from, to, 2048, 20 * kNsPerS, fetch);
  CHECK(c.bytes_per_gpu == doctest::Approx(bytes));
  CHECK(c.move_ns == transfer_ns(bytes, 50e9) + 1000);
  CHECK(c.rebuild_ns == 20 * kNsPerS);
  CHECK(c.total_ns() == c.move_ns + c.rebuild_ns);
  CHECK(replan_reshards(from, to));
}

TEST_CASE("a change that keeps the sharding moves nothing and rebuilds nothing") {
  const ModelSpec m = test::gpt3_175b();
  const ParallelPlan from = test::plan_175b();
  for (auto change : {+[](ParallelPlan& p) { p.micro_batch = 2; },
                      +[](ParallelPlan& p) { p.recompute = Recompute::Full; },
                      +[](ParallelPlan& p) { p.schedule = Schedule::GPipe; },
                      +[](ParallelPlan& p) { p.sync = SyncMode::Hierarchical; }}) {
    ParallelPlan to = from;
    change(to);
    const ReplanCost c = replan_cost(m, from, to, 2048, 20 * kNsPerS, [](double) -> TimeNs {
      FAIL("nothing is fetched");
      return 0;
    });
    CHECK(c.total_ns() == 0);
    CHECK(c.bytes_per_gpu == 0);
  }
  // Sharding the optimizer re-shards it.
  ParallelPlan fsdp = from;
  fsdp.optimizer_sharding = OptimizerSharding::Fsdp;
  CHECK(replan_reshards(from, fsdp));
}
