#include <doctest/doctest.h>

#include "../planner/fixtures.hpp"
#include "core/rank_layout.hpp"
#include "core/snapshot/remap.hpp"
#include "core/snapshot/shrink.hpp"

using namespace parashift::core;

namespace {

// 4 GPUs per host: hosts 0 and 1 in rack 0, host 2 in rack 1.
GpuPlace place(int gpu) {
  const int host = gpu / 4;
  return GpuPlace{host, host < 2 ? 0 : 1};
}

}  // namespace

TEST_CASE("a lost rank goes to the nearest spare: same host, then same rack, then anywhere") {
  std::vector<int> spares{11, 5, 3};
  auto r = remap_to_spares({{7, 1}}, spares, place);  // rank 7 lost on GPU 1 (host 0)
  REQUIRE(r.placed.size() == 1);
  CHECK(r.placed[0].to_gpu == 3);
  CHECK(r.placed[0].nearness == Nearness::SameHost);
  CHECK(spares == std::vector<int>{11, 5});

  r = remap_to_spares({{7, 1}}, spares, place);
  CHECK(r.placed[0].to_gpu == 5);
  CHECK(r.placed[0].nearness == Nearness::SameRack);

  r = remap_to_spares({{7, 1}}, spares, place);
  CHECK(r.placed[0].to_gpu == 11);
  CHECK(r.placed[0].nearness == Nearness::Anywhere);
  CHECK(spares.empty());

  r = remap_to_spares({{7, 1}}, spares, place);
  CHECK(r.placed.empty());
  REQUIRE(r.unplaced.size() == 1);
  CHECK(r.unplaced[0].rank == 7);
}

TEST_CASE("ranks lost together from one host stay together on a near host") {
  // Host 0 died (ranks 0, 1 on GPUs 0, 1). Spares: one on host 1 (rack 0)
  // is not enough for the group; host 2 (rack 1) has two. Same rack wins
  // for the first rank; the second follows it to host 1's other spare.
  std::vector<int> spares{5, 6, 8, 9};
  const auto r = remap_to_spares({{0, 0}, {1, 1}}, spares, place);
  REQUIRE(r.placed.size() == 2);
  CHECK(place(r.placed[0].to_gpu).host == 1);
  CHECK(place(r.placed[1].to_gpu).host == 1);
  CHECK(spares == std::vector<int>{8, 9});
}

TEST_CASE("no spare left: the replica that held the lost rank is dropped and the job re-planned") {
  // Llama-2 7B on 64 H100s: tp8 pp2 dp4, global batch 64 (16 per replica).
  PlannerInput in = test::planner_input(test::llama2_7b(), "h100-sxm-80gb", 64, 64, 4096);
  ParallelPlan plan;
  plan.tp = 8;
  plan.pp = 2;
  plan.dp = 4;
  plan.global_batch = 64;
  std::vector<int> spares;
  const RankLayout layout(plan);
  const int lost_rank = layout.rank(RankCoord{3, 0, 2, 1});  // tp 3, replica 2, stage 1
  const auto remap = remap_to_spares({{lost_rank, lost_rank}}, spares, place);
  REQUIRE(remap.unplaced.size() == 1);
  const auto shrunk = shrink_and_replan(in, plan, {remap.unplaced[0].rank});
  REQUIRE(shrunk.has_value());
  // One replica dropped: dp 3 on 48 GPUs, batch 3 * 16 = 48 = 0.75 of 64.
  CHECK(shrunk->dropped_dp == std::vector<int>{2});
  CHECK(shrunk->plan.dp == 3);
  CHECK(shrunk->plan.tp == 8);
  CHECK(shrunk->plan.pp == 2);
  CHECK(shrunk->gpus == 48);
  CHECK(shrunk->plan.global_batch == 48);
  CHECK(shrunk->batch_share == doctest::Approx(0.75));
}

TEST_CASE("a shrink keeps the running plan's shape when the model rates it at least as fast") {
  // Llama-3 405B on 16,384 H100s, tp8 pp16 dp128 with 2 virtual stages:
  // 126 layers do not split evenly over 16 x 2 chunks, so the search never
  // enumerates this shape. Replica 5 lost a rank and no spare is left.
  const ModelSpec llama3_405b =
      test::make_model("llama3-405b", 126, 16384, 128, 8, 53248, FfnKind::SwiGlu, 128256, false);
  PlannerInput in = test::planner_input(llama3_405b, "h100-sxm-80gb", 16384, 2048, 8192);
  ParallelPlan plan;
  plan.tp = 8;
  plan.pp = 16;
  plan.dp = 128;
  plan.virtual_stages = 2;
  plan.schedule = Schedule::Interleaved1F1B;
  plan.recompute = Recompute::Full;
  plan.sequence_parallel = true;
  plan.optimizer_sharding = OptimizerSharding::Distributed;
  plan.global_batch = 2048;
  const int lost = RankLayout(plan).rank(RankCoord{0, 0, 5, 3});
  // The search alone on the 127 replicas left (the same pins, no reference).
  PlannerInput pinned = in;
  pinned.cluster.gpus = 127 * 128;
  pinned.global_batch = 127 * 16;
  pinned.pins.tp = 8;
  pinned.pins.pp = 16;
  pinned.pins.cp = 1;
  pinned.pins.dp = 127;
  PlannerOptions one;
  one.top_k = 1;
  const auto searched = search_plans(pinned, one);
  REQUIRE_FALSE(searched.top.empty());
  pinned.reference = plan;
  pinned.reference->dp = 127;
  const auto with_kept = search_plans(pinned, one);
  REQUIRE(with_kept.reference.has_value());
  const TimeNs kept_ns = with_kept.reference->ranked.estimate.total_ns;
  const auto shrunk = shrink_and_replan(in, plan, {lost});
  REQUIRE(shrunk.has_value());
  CHECK(shrunk->plan.dp == 127);
  CHECK(shrunk->plan.global_batch == 2032);
  // The model rates the kept shape faster than the search's best (about
  // 10.6 s against 12.3 s: the best enumerated plans need an even split, so
  // they give up interleaving), so it stays.
  CHECK(kept_ns < searched.top.front().estimate.total_ns);
  CHECK(shrunk->plan.label() == pinned.reference->label());
  // A shape the model rates slower (GPipe, no sequence parallelism) gives way
  // to the search's best.
  ParallelPlan slow = plan;
  slow.schedule = Schedule::GPipe;
  slow.virtual_stages = 1;
  slow.sequence_parallel = false;
  const auto replaced = shrink_and_replan(in, slow, {lost});
  REQUIRE(replaced.has_value());
  CHECK(replaced->plan.label() == searched.top.front().plan.label());
}

TEST_CASE(
    "regrow gives the dropped replicas back as the free GPUs allow, each replica's batch kept") {
  // The original: tp2 pp2 dp8, global batch 64 (8 a replica; a replica is
  // 2 x 2 = 4 GPUs). Shrunk to dp2 (batch 16), 6 replicas are missing.
  ParallelPlan original;
  original.tp = 2;
  original.pp = 2;
  original.dp = 8;
  original.global_batch = 64;
  ParallelPlan shrunk = original;
  shrunk.dp = 2;
  shrunk.global_batch = 16;
  // 3 free GPUs fit no replica.
  CHECK_FALSE(regrow_plan(shrunk, original, 3).has_value());
  // 9 free GPUs fit 2 replicas: dp 4, batch 4 x 8 = 32.
  const auto partial = regrow_plan(shrunk, original, 9);
  REQUIRE(partial.has_value());
  CHECK(partial->dp == 4);
  CHECK(partial->global_batch == 32);
  // 24 free GPUs fit all 6: the original plan itself.
  const auto full = regrow_plan(shrunk, original, 24);
  REQUIRE(full.has_value());
  CHECK(full->label() == original.label());
  // Nothing missing: nothing to grow.
  CHECK_FALSE(regrow_plan(original, original, 64).has_value());
}
