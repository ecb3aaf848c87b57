#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <stdexcept>

#include "core/input_error.hpp"
#include "hw/comm/self_communicator.hpp"
#include "hw/exec/hw_backend.hpp"
#include "hw/hw_error.hpp"
#include "tests/hw/hw_test_model.hpp"

using namespace parashift;

namespace {

std::vector<double> train(hw::HwBackend& backend, const core::ParallelPlan& plan, int iterations) {
  std::vector<double> losses;
  for (int i = 0; i < iterations; ++i) {
    backend.step(plan);
    losses.push_back(backend.last_loss());
  }
  return losses;
}

}  // namespace

TEST_CASE("one rank trains the synthetic model: the loss falls under SGD and Adam") {
  for (auto kind : {hw::OptimizerKind::Sgd, hw::OptimizerKind::Adam}) {
    CAPTURE(hw::to_string(kind));
    hw::SelfCommunicator world;
    const auto plan = test::tiny_plan(1, 1, 1);
    hw::HwBackend backend(test::tiny_model(), test::kTinySeq, 1, plan,
                          test::tiny_options(kind, "train"), world);
    const auto losses = train(backend, plan, 5);
    // Output ~ input + layer noise against an independent target of variance
    // 1/12: the first loss is near 0.4; a working optimizer lowers it every step.
    CHECK(losses[0] > 0.1);
    for (std::size_t i = 1; i < losses.size(); ++i) CHECK(losses[i] < losses[i - 1]);
    CHECK(backend.iterations_done() == 5);
  }
}

TEST_CASE("the step report has one entry per rank and no groups on one rank") {
  hw::SelfCommunicator world;
  const auto plan = test::tiny_plan(1, 1, 1);
  hw::HwBackend backend(test::tiny_model(), test::kTinySeq, 1, plan,
                        test::tiny_options(hw::OptimizerKind::Sgd, "report"), world);
  const auto report = backend.step(plan);
  CHECK(report.iteration == 0);
  REQUIRE(report.rank_compute_ns.size() == 1);
  CHECK(report.rank_compute_ns[0] > 0);
  CHECK(report.iteration_ns >= report.rank_compute_ns[0]);
  CHECK(report.rank_exposed_comm_ns[0] == 0);
  // Weights + gradients (SGD) of 4 layers: 4 x (32x96 + 32x32 + 2 x 32x64) floats x 4 B x 2
  // = 4 x 8192 x 8 = 262144 B, plus the stash of one micro-batch in flight.
  CHECK(report.rank_peak_memory_bytes[0] > 262144);
  CHECK(report.comm.empty());
  CHECK(backend.step(plan).iteration == 1);
  CHECK(backend.capabilities().live_repartition);
  CHECK(backend.capabilities().snapshots_to_host);
  CHECK_FALSE(backend.capabilities().link_telemetry);
}

TEST_CASE("counted clock: compute is the layer work done, a slowdown multiplies the count") {
  hw::SelfCommunicator world;
  auto plan = test::tiny_plan(1, 1, 1);
  hw::HwOptions options = test::tiny_options(hw::OptimizerKind::Sgd, "counted");
  options.compute_clock = hw::ComputeClock::Counted;
  options.counted_unit_ns = 1000;
  hw::HwBackend backend(test::tiny_model(), test::kTinySeq, 1, plan, options, world);
  // 4 micro-batches x 4 layers x (forward 1 + backward 2) = 48 units of 1 us;
  // the optimizer step counts nothing: 48,000 ns, every iteration alike.
  CHECK(backend.step(plan).rank_compute_ns[0] == 48'000);
  CHECK(backend.step(plan).rank_compute_ns[0] == 48'000);
  // At 1.5x: 48 x 1.5 = 72 units.
  backend.set_compute_slowdown(1.5);
  CHECK(backend.step(plan).rank_compute_ns[0] == 72'000);
  // Counted work has no optimizer time to report: none, not a zero.
  CHECK(backend.step(plan).rank_optimizer_ns.empty());
}

TEST_CASE("measured clock: the optimizer step is reported apart from compute") {
  // As the simulator reports it (and the calibration's optimizer row reads
  // it): one time per rank, spent, and within the iteration beside compute.
  hw::SelfCommunicator world;
  auto opts = test::tiny_options(hw::OptimizerKind::Adam, "optimizer-time");
  opts.compute_clock = hw::ComputeClock::ThreadCpu;
  const auto plan = test::tiny_plan(1, 1, 1);
  hw::HwBackend backend(test::tiny_model(), test::kTinySeq, 1, plan, opts, world);
  const core::StepReport r = backend.step(plan);
  REQUIRE(r.rank_optimizer_ns.size() == 1);
  CHECK(r.rank_optimizer_ns[0] > 0);
  CHECK(r.rank_compute_ns[0] > 0);
}

TEST_CASE("counted clock: selective recompute adds its GEMMs' share, ZB-H1 splits B and W") {
  for (const bool zb : {false, true}) {
    CAPTURE(zb);
    hw::SelfCommunicator world;
    auto plan = test::tiny_plan(1, 1, 1);
    if (zb) {
      plan.schedule = core::Schedule::ZeroBubbleH1;
    } else {
      plan.recompute = core::Recompute::Selective;
    }
    hw::HwOptions options = test::tiny_options(hw::OptimizerKind::Sgd, "counted-r");
    options.compute_clock = hw::ComputeClock::Counted;
    options.counted_unit_ns = 1000;
    hw::HwBackend backend(test::tiny_model(), test::kTinySeq, 1, plan, options, world);
    // Selective recompute reruns the scores GEMMs alone: per sequence 4
    // heads x 2 x 8 x 8 x 8 = 4,096 FLOPs of the forward's 139,264 (q k v
    // 49,152, scores and their product with v 4,096 each, the output
    // projection 16,384, the MLP 2 x 32,768), 0.0294 units. A backward
    // segment of 4 layers counts 4 x 2.0294 units = 8,117.6 ns, rounded to
    // 8,118; 4 micro-batches: 4 x (4,000 forward + 8,118) = 48,472 ns.
    // ZB-H1: 4 x 4 x (F 1 + B 1 + W 1) = 48 units.
    CHECK(backend.step(plan).rank_compute_ns[0] == (zb ? 48'000 : 48'472));
  }
}

TEST_CASE("snapshot, train on, restore: the same losses again, bit for bit") {
  hw::SelfCommunicator world;
  const auto plan = test::tiny_plan(1, 1, 1);
  hw::HwBackend backend(test::tiny_model(), test::kTinySeq, 1, plan,
                        test::tiny_options(hw::OptimizerKind::Adam, "snap"), world);
  train(backend, plan, 2);
  backend.apply({core::SnapshotDirective{2}, "test", 0});
  const auto first = train(backend, plan, 3);
  CHECK(backend.newest_restorable_snapshot() == 2);
  backend.apply({core::RestoreDirective{2}, "test", 0});
  CHECK(backend.iterations_done() == 2);
  CHECK(backend.last_restore().shards_fetched == 0);  // one node: nothing lost, nothing fetched
  const auto again = train(backend, plan, 3);
  CHECK(again == first);
  CHECK_THROWS_AS(backend.apply({core::RestoreDirective{7}, "test", 0}), hw::HwError);
  backend.remove_snapshots();
}

TEST_CASE("plans and directives the executor does not run are refused clearly") {
  hw::SelfCommunicator world;
  const auto opts = test::tiny_options(hw::OptimizerKind::Sgd, "refuse");
  auto plan = test::tiny_plan(1, 1, 1);
  CHECK_THROWS_WITH_AS(
      hw::HwBackend(test::tiny_model(), test::kTinySeq, 1, test::tiny_plan(2, 1, 1), opts, world),
      "plan: tp*pp*dp*cp=2 ranks, but the job has 1 (launch with mpirun -np 2)", core::InputError);
  plan.recompute = core::Recompute::Full;
  plan.schedule = core::Schedule::ZeroBubbleH1;
  CHECK_THROWS_WITH_AS(hw::HwBackend(test::tiny_model(), test::kTinySeq, 1, plan, opts, world),
                       "plan.recompute: full with schedule zb_h1 (its weight passes would need "
                       "the whole forward again); expected none or selective (the hw executor "
                       "does not run it)",
                       core::InputError);
  plan.schedule = core::Schedule::OneFOneB;
  plan.recompute_layers = 1;
  CHECK_THROWS_WITH_AS(hw::HwBackend(test::tiny_model(), test::kTinySeq, 1, plan, opts, world),
                       "plan.recompute_layers: recomputing 1 layers of each stage; expected "
                       "every layer (leave recompute_layers out) (the hw executor does not run it)",
                       core::InputError);
  plan.recompute_layers = 0;
  plan.recompute = core::Recompute::None;
  plan.schedule = core::Schedule::Interleaved1F1B;
  plan.virtual_stages = 2;
  CHECK_THROWS_WITH_AS(hw::HwBackend(test::tiny_model(), test::kTinySeq, 1, plan, opts, world),
                       "plan.virtual_stages: interleaving needs pp > 1, found pp=1 "
                       "virtual_stages=2 (the hw executor does not run it)",
                       core::InputError);
  plan.schedule = core::Schedule::OneFOneB;
  plan.virtual_stages = 1;
  hw::HwBackend backend(test::tiny_model(), test::kTinySeq, 1, plan, opts, world);
  // A re-plan runs live (replan_test.cpp), but not onto more ranks than the job has.
  auto replanned = plan;
  replanned.dp = 2;
  CHECK_THROWS_WITH_AS(backend.apply({core::ReplanDirective{replanned}, "", 0}),
                       doctest::Contains("tp*pp*dp*cp=2 ranks, but the job has 1"),
                       core::InputError);
  CHECK_THROWS_AS(backend.apply({core::RepartitionDirective{{3}}, "", 0}), core::InputError);
  auto other = plan;
  other.global_batch = 8;
  CHECK_THROWS_AS(backend.step(other), std::invalid_argument);
}

TEST_CASE("a compute slowdown shows in the report's compute time, as a throttled device's would") {
  // Every compute segment is stretched to 8x its time on the thread's CPU
  // clock, and the stretch is compute: a slowed step reports ~8x a healthy
  // one's compute. The two backends step in turn after one warm-up step each
  // (first-touch page faults land there), and the fastest of 5 steps of each
  // is compared, so a slow spell of the machine must hit every slowed-down
  // step's base, not one run, to matter; asserted > 3x, which leaves the base
  // a factor 8/3 of noise.
  hw::SelfCommunicator world;
  auto opts = test::tiny_options(hw::OptimizerKind::Adam, "slowdown");
  opts.compute_clock = hw::ComputeClock::ThreadCpu;
  const auto plan = test::tiny_plan(1, 1, 1);
  hw::HwBackend healthy(test::tiny_model(), test::kTinySeq, 1, plan, opts, world);
  hw::HwBackend slowed(test::tiny_model(), test::kTinySeq, 1, plan, opts, world);
  slowed.set_compute_slowdown(8.0);
  healthy.step(plan);
  slowed.step(plan);
  auto fastest_healthy = std::numeric_limits<double>::infinity();
  auto fastest_slowed = std::numeric_limits<double>::infinity();
  for (int i = 0; i < 5; ++i) {
    fastest_healthy =
        std::min(fastest_healthy, static_cast<double>(healthy.step(plan).rank_compute_ns[0]));
    fastest_slowed =
        std::min(fastest_slowed, static_cast<double>(slowed.step(plan).rank_compute_ns[0]));
  }
  REQUIRE(fastest_healthy > 0);
  CHECK(fastest_slowed > 3.0 * fastest_healthy);
}
