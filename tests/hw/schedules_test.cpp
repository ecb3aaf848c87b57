// The executor runs every pipeline schedule the simulator does (core's
// stage_schedule): GPipe, 1F1B, ZB-H1 with its split backward, and
// interleaved 1F1B with several model chunks per stage, with live layer
// moves and snapshots under interleaving.
#include <doctest/doctest.h>

#include "core/input_error.hpp"
#include "hw/comm/thread_communicator.hpp"
#include "hw/device/host_kernels.hpp"
#include "tests/hw/group_training.hpp"

using namespace parashift;

namespace {

core::ParallelPlan plan_with(int pp, core::Schedule schedule, int virtual_stages = 1) {
  auto plan = test::tiny_plan(1, pp, 1);
  plan.schedule = schedule;
  plan.virtual_stages = virtual_stages;
  return plan;
}

test::GroupRun six_layer_run(const std::string& job, int iterations = 3) {
  test::GroupRun run;
  run.model.layers = 6;
  run.iterations = iterations;
  run.job = job;
  return run;
}

}  // namespace

TEST_CASE("every schedule trains the same model to the same losses, bit for bit") {
  // Each layer computes the same GEMMs on the same inputs wherever it runs,
  // and each weight gradient sums its micro-batches in micro-batch order
  // under every schedule (ZB-H1's W passes and interleaving's per-chunk
  // backwards keep that order), so the losses are identical to one rank's.
  const auto run = six_layer_run("sched");
  const auto reference = test::train_threads(test::tiny_plan(1, 1, 1), run);
  REQUIRE(reference.size() == 3);
  CHECK(reference[2] < reference[0]);  // it trains
  for (const auto& plan :
       {plan_with(2, core::Schedule::OneFOneB), plan_with(2, core::Schedule::GPipe),
        plan_with(2, core::Schedule::ZeroBubbleH1), plan_with(3, core::Schedule::ZeroBubbleH1),
        plan_with(2, core::Schedule::Interleaved1F1B, 2),
        plan_with(2, core::Schedule::Interleaved1F1B, 3)}) {
    CAPTURE(plan.label());
    CHECK(test::train_threads(plan, run) == reference);
  }
}

TEST_CASE("ZB-H1 holds each micro-batch's output gradients from its B to its W") {
  // pp 2, 4 micro-batches, 4 layers: 2 per stage. Peak live bytes per stage
  // (the report's peak memory less the same parameters and optimizer state):
  //  1F1B  stage 0: F0 F1 B0 ...      2 stashes per layer
  //        stage 1: F0 B0 F1 B1 ...   1 stash
  //  ZB-H1 stage 0: F0 F1 B0 W0 ...   2 stashes + 1 set of output gradients
  //        stage 1: F0 B0 F1 B1 W0 .. 2 stashes + 2 sets (it keeps one W pending)
  std::vector<core::StepReport> one_f_one_b, zero_bubble;
  test::GroupRun run;
  run.iterations = 1;
  run.job = "zb-mem";
  run.reports = &one_f_one_b;
  const auto a = test::train_threads(plan_with(2, core::Schedule::OneFOneB), run);
  run.reports = &zero_bubble;
  const auto b = test::train_threads(plan_with(2, core::Schedule::ZeroBubbleH1), run);
  CHECK(a == b);
  hw::HostKernels kernels;
  const hw::LayerShape shape{32, 4, 64, 1, test::kTinySeq, 1};
  const auto stash = static_cast<double>(hw::DeviceStash(kernels, shape).bytes());
  const auto grads = static_cast<double>(hw::DeviceOutputGrads(kernels, shape).bytes());
  const auto& zb = zero_bubble.at(0).rank_peak_memory_bytes;
  const auto& base = one_f_one_b.at(0).rank_peak_memory_bytes;
  REQUIRE(zb.size() == 2);
  CHECK(zb[0] - base[0] == doctest::Approx(2 * grads));
  CHECK(zb[1] - base[1] == doctest::Approx(2 * (stash + 2 * grads)));
}

TEST_CASE("interleaved 1F1B: layers move between chunks live, losses unchanged") {
  // pp 2 x 2 chunks over 6 layers: virtual stages {2,2,1,1} hold layers
  // 0-1 (stage 0), 2-3 (stage 1), 4 (stage 0), 5 (stage 1). Before
  // iteration 2 they become {1,1,2,2}: layer 1 moves to stage 1, layers 2
  // and 3 to stage 0, layer 4 to stage 1, weights and Adam moments intact.
  const auto plan = plan_with(2, core::Schedule::Interleaved1F1B, 2);
  const auto undisturbed = test::train_threads(plan, six_layer_run("il-steady", 4));
  auto run = six_layer_run("il-moved", 4);
  std::vector<int> final_layers;
  run.final_layers = &final_layers;
  run.before = [](hw::HwBackend& backend, int i) {
    if (i == 2) backend.apply({core::RepartitionDirective{{1, 1, 2, 2}}, "test", 0});
  };
  CHECK(test::train_threads(plan, run) == undisturbed);
  CHECK(final_layers == std::vector<int>{1, 1, 2, 2});
  // A split with pp entries instead of pp x chunks is refused.
  run.before = [](hw::HwBackend& backend, int i) {
    if (i == 1) backend.apply({core::RepartitionDirective{{3, 3}}, "test", 0});
  };
  CHECK_THROWS_WITH_AS(test::train_threads(plan, run),
                       "repartition layers_per_stage: expected 4 entries >= 1 summing to 6, "
                       "found [3,3]",
                       core::InputError);
}

TEST_CASE("interleaved 1F1B: a snapshot restores every chunk's layers") {
  // Snapshot before iteration 2, restore it before iteration 4: iterations
  // 4 and 5 repeat 2 and 3 exactly.
  auto run = six_layer_run("il-snap", 6);
  run.ranks_per_node = 1;  // two "nodes": each shard also lives on the other
  run.before = [](hw::HwBackend& backend, int i) {
    if (i == 2) backend.apply({core::SnapshotDirective{2}, "test", 0});
    if (i == 4) backend.apply({core::RestoreDirective{2}, "test", 0});
  };
  const auto losses = test::train_threads(plan_with(2, core::Schedule::Interleaved1F1B, 2), run);
  REQUIRE(losses.size() == 6);
  CHECK(losses[4] == losses[2]);
  CHECK(losses[5] == losses[3]);
  CHECK(losses[3] != losses[2]);
}

TEST_CASE("interleaved 1F1B: a rebalance must keep each replica's count a multiple of pp") {
  // pp 2 x dp 2 x 2 chunks, 2 micro-batches per replica: [1,3] would leave
  // a replica with half a group of pp micro-batches (its schedule would run
  // passes of micro-batches it does not have); refused on every rank.
  auto plan = plan_with(2, core::Schedule::Interleaved1F1B, 2);
  plan.dp = 2;
  auto run = six_layer_run("il-rebalance", 2);
  run.before = [](hw::HwBackend& backend, int i) {
    if (i == 1) backend.apply({core::RebalanceDirective{{1, 3}}, "test", 0});
  };
  CHECK_THROWS_WITH_AS(test::train_threads(plan, run),
                       "rebalance micro_batches: interleaved 1F1B needs multiples of pp=2, found "
                       "[1,3]",
                       core::InputError);
}
