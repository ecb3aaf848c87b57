// core/cost/speed_balance.hpp: a plan with slow GPUs, as the balance module
// would run it. Each expected number is derived by hand in the comment
// before its check, in units of a healthy micro-batch's stage time t.
#include <doctest/doctest.h>

#include "core/cost/speed_balance.hpp"

using namespace parashift::core;

namespace {

ParallelPlan plan_of(int pp, int dp, int global_batch) {
  ParallelPlan p;
  p.pp = pp;
  p.dp = dp;
  p.global_batch = global_batch;
  return p;
}

// A healthy estimate whose passes take t = 1 ms a micro-batch on a stage
// (`micro` of them per replica) and whose fill and drain take `bubble_t` t.
IterationEstimate healthy_of(int micro, double bubble_t) {
  IterationEstimate e;
  e.forward_ns = micro * 1'000'000 / 3;
  e.backward_ns = micro * 1'000'000 - e.forward_ns;
  e.bubble_ns = static_cast<TimeNs>(bubble_t * 1e6);
  e.dp_comm_exposed_ns = 500'000;
  e.total_ns = e.forward_ns + e.backward_ns + e.bubble_ns + e.dp_comm_exposed_ns;
  e.tokens_per_s = 1000;
  e.mfu = 0.5;
  return e;
}

}  // namespace

TEST_CASE("no slow GPU, or one the plan does not use: the healthy plan") {
  const ParallelPlan p = plan_of(1, 4, 32);
  const IterationEstimate e = healthy_of(8, 0);
  for (const auto& slow : {std::vector<GpuFactor>{}, std::vector<GpuFactor>{{4, 2.0}}}) {
    const SpeedBalance b = balance_by_speed(p, e, slow);
    CHECK(b.stretch == 1.0);
    CHECK(b.micro_batches_per_replica.empty());
    CHECK(with_gpu_factors(e, p, slow).total_ns == e.total_ns);
  }
}

TEST_CASE("one replica at half speed gets fewer micro-batches, the batch kept") {
  // dp4, 8 micro-batches each (32 in all); GPU 0 is replica 0 at 2x time.
  // At level L a healthy replica runs floor(L) and the slow one floor(L/2):
  // L = 9 gives 27 + 4 = 31 < 32, L = 10 gives 30 + 5 = 35 >= 32, so the
  // least level is 10 t against the healthy 8 t: stretch 1.25. The 3 extra
  // are taken back from whoever stays busiest without one, lowest index
  // first: replicas 1, 2, 3 (10 -> 9 t) before replica 0 (5 x 2 -> 8 t).
  const ParallelPlan p = plan_of(1, 4, 32);
  const IterationEstimate e = healthy_of(8, 0);
  const SpeedBalance b = balance_by_speed(p, e, {{0, 2.0}});
  CHECK(b.stretch == doctest::Approx(1.25));
  CHECK(b.micro_batches_per_replica == std::vector<int>{5, 9, 9, 9});
  // The passes (8 ms) stretch by 1.25 to 10 ms; the exposed sync stays.
  const IterationEstimate s = with_gpu_factors(e, p, {{0, 2.0}});
  CHECK(s.total_ns == doctest::Approx(10'500'000).epsilon(1e-6));
  CHECK(s.tokens_per_s == doctest::Approx(1000.0 * 8.5 / 10.5).epsilon(1e-6));
}

TEST_CASE("FSDP keeps every replica's micro-batches: the slowest GPU paces the iteration") {
  // Under FSDP every replica runs 8: the slow one takes 16 t, stretch 2.
  ParallelPlan p = plan_of(1, 4, 32);
  p.optimizer_sharding = OptimizerSharding::Fsdp;
  const SpeedBalance b = balance_by_speed(p, healthy_of(8, 0), {{0, 2.0}});
  CHECK(b.stretch == doctest::Approx(2.0));
  CHECK(b.micro_batches_per_replica.empty());
}

TEST_CASE("a slow stage: the replica runs at its pace, its fill and drain at the stages' mean") {
  // pp2 dp2, 4 micro-batches a replica, fill and drain 1 t (healthy 5 t).
  // GPU 2 is stage 1 of replica 0 (rank = dp + 2 pp) at 2x: that replica
  // takes 2 m + 1 x (2 + 1) / 2 = 2 m + 1.5, the healthy one m + 1.
  // Level 6: 5 + floor(2.25) = 7 < 8; level 7: 6 + 2 = 8: stretch 7 / 5.
  const ParallelPlan p = plan_of(2, 2, 8);
  const SpeedBalance b = balance_by_speed(p, healthy_of(4, 1), {{2, 2.0}});
  CHECK(b.stretch == doctest::Approx(1.4));
  CHECK(b.micro_batches_per_replica == std::vector<int>{2, 6});
  // Both GPUs of replica 0 slow, one at 2x and one at 3x: the slowest
  // stage paces (3 m), the mean is 2.5: 3 m + 2.5 against m + 1. Level 7
  // gives 6 + floor(4.5 / 3) = 7 < 8; level 8 gives 7 + floor(5.5 / 3) = 8
  // exactly: stretch 8 / 5, shares [1, 7].
  const SpeedBalance both = balance_by_speed(p, healthy_of(4, 1), {{0, 2.0}, {2, 3.0}});
  CHECK(both.stretch == doctest::Approx(1.6));
  CHECK(both.micro_batches_per_replica == std::vector<int>{1, 7});
}

TEST_CASE("interleaving moves micro-batches in groups of pp") {
  // pp2 v2 dp2, 8 micro-batches a replica, no bubble for simplicity; GPU 0
  // (replica 0, stage 0) at 2x. Steps of 2: the slow replica runs 2 k at
  // 4 k t, the healthy one 2 k at 2 k t. Level 10: 10 + 4 = 14 < 16;
  // level 12: 12 + 6 = 18 >= 16 (level 11 adds nothing); the 2 extra come
  // off the replica busiest without them, the healthy one (10 t against the
  // slow one's 8 t): [6, 10], stretch 12 / 8.
  ParallelPlan p = plan_of(2, 2, 16);
  p.virtual_stages = 2;
  p.schedule = Schedule::Interleaved1F1B;
  const SpeedBalance b = balance_by_speed(p, healthy_of(8, 0), {{0, 2.0}});
  CHECK(b.stretch == doctest::Approx(1.5));
  CHECK(b.micro_batches_per_replica == std::vector<int>{6, 10});
}

TEST_CASE("a faster replica takes more micro-batches, a stage is as fast as its slowest GPU") {
  // dp2, 8 micro-batches each (16); GPU 0 (replica 0) at half the time.
  // At level L replica 0 runs floor(2 L), replica 1 floor(L): L = 5 gives
  // 10 + 5 = 15 < 16, L = 5.5 gives 11 + 5 = 16: stretch 5.5 / 8, shares
  // [11, 5] exactly.
  const ParallelPlan p = plan_of(1, 2, 16);
  const SpeedBalance b = balance_by_speed(p, healthy_of(8, 0), {{0, 0.5}});
  CHECK(b.stretch == doctest::Approx(5.5 / 8));
  CHECK(b.micro_batches_per_replica == std::vector<int>{11, 5});
  // With tp2 only one of replica 0's two GPUs is fast: its worker runs at
  // the other's pace (1), so nothing changes.
  ParallelPlan tp2 = p;
  tp2.tp = 2;
  CHECK(balance_by_speed(tp2, healthy_of(8, 0), {{0, 0.5}}).stretch == 1.0);
  CHECK(balance_by_speed(tp2, healthy_of(8, 0), {{0, 0.5}, {1, 0.5}}).stretch ==
        doctest::Approx(5.5 / 8));
}

TEST_CASE("two factor lists merge by GPU, a GPU in both at the product") {
  CHECK(merge_factors({{1, 2.0}, {4, 1.5}}, {{0, 3.0}, {4, 2.0}}) ==
        std::vector<GpuFactor>{{0, 3.0}, {1, 2.0}, {4, 3.0}});
}

TEST_CASE("slow GPUs from a per-GPU slowdown vector") {
  CHECK(gpu_factors_of({1.0, 1.5, 1.0, 2.0}) == std::vector<GpuFactor>{{1, 1.5}, {3, 2.0}});
  CHECK(gpu_factors_of({}).empty());
}
