// A live re-plan on the executor (HwBackend::apply(ReplanDirective)): the
// layers' weights and Adam moments are gathered whole and cut again for the
// new plan's tp, pp and dp on the same ranks.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/input_error.hpp"
#include "hw/comm/thread_communicator.hpp"
#include "hw/model/layer.hpp"
#include "tests/hw/group_training.hpp"

using namespace parashift;

namespace {

core::ParallelPlan with_sharding(core::ParallelPlan plan, core::OptimizerSharding sharding) {
  plan.optimizer_sharding = sharding;
  return plan;
}

// Applies `to` on every rank before iteration `at`.
test::BeforeStep replan_at(int at, const core::ParallelPlan& to) {
  return [at, to](hw::HwBackend& backend, int i) {
    if (i == at) backend.apply(core::Directive{core::ReplanDirective{to}, "test", 0});
  };
}

double max_rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    worst = std::max(worst, std::abs(a[i] - b[i]) / std::abs(b[i]));
  return worst;
}

}  // namespace

TEST_CASE("a tensor-parallel shard's elements sit where the whole layer has them") {
  // init_layer draws every element from its place in the whole tensor, so
  // tp rank r's shard must equal the whole (tp 1) layer read at
  // tp_whole_index; and the tp shards together cover every whole element
  // exactly once (hidden 32 x 96 + 32 x 32 + 32 x 64 + 64 x 32 = 8192).
  hw::LayerShape whole{32, 4, 64, 1, 8, 1, false};
  const hw::LayerTensors reference = hw::init_layer(whole, 5, 2, 0);
  for (const int tp : {2, 4}) {
    CAPTURE(tp);
    hw::LayerShape shape = whole;
    shape.tp = tp;
    std::array<std::vector<int>, 4> hits;
    for (int t = 0; t < 4; ++t)
      hits[static_cast<std::size_t>(t)].assign(
          static_cast<std::size_t>(reference.all()[static_cast<std::size_t>(t)]->size()), 0);
    for (int r = 0; r < tp; ++r) {
      const hw::LayerTensors shard = hw::init_layer(shape, 5, 2, r);
      for (int t = 0; t < 4; ++t) {
        const auto& local = *shard.all()[static_cast<std::size_t>(t)];
        const auto& full = *reference.all()[static_cast<std::size_t>(t)];
        int wrong = 0;
        for (Eigen::Index i = 0; i < local.size(); ++i) {
          const std::size_t at = hw::tp_whole_index(shape, t, r, static_cast<std::size_t>(i));
          if (local.data()[i] != full.data()[at]) ++wrong;
          ++hits[static_cast<std::size_t>(t)].at(at);
        }
        CHECK(wrong == 0);
      }
    }
    for (const auto& h : hits) CHECK(std::all_of(h.begin(), h.end(), [](int n) { return n == 1; }));
  }
}

TEST_CASE("a re-plan before the first iteration trains exactly as the new plan from the start") {
  // The initial weights are the same whole tensors under every plan and the
  // moments are zero, so tp2 pp2 re-planned to dp4 (or dp4 with the
  // distributed optimizer) before iteration 0 holds, on each rank, the bits
  // a dp4 job starts with: the same losses, bit for bit.
  test::GroupRun run;
  run.job = "replan0";
  run.iterations = 4;
  for (const auto sharding :
       {core::OptimizerSharding::None, core::OptimizerSharding::Distributed}) {
    const auto to = with_sharding(test::tiny_plan(1, 1, 4), sharding);
    CAPTURE(to.label());
    const auto expected = test::train_threads(to, run);
    run.before = replan_at(0, to);
    CHECK(test::train_threads(test::tiny_plan(2, 2, 1), run) == expected);
    run.before = {};
  }
}

TEST_CASE("a re-plan there and back mid-run changes nothing, bit for bit") {
  // tp2 pp2 -> dp4 with the distributed optimizer -> tp2 pp2 before
  // iteration 2: Adam's moments go through four dp shards and back, the
  // weights through one replica's whole tensors; bits only move, so the
  // losses equal the run that never re-planned. A moment lost or misplaced
  // on the way changes iteration 2's update and every loss after it.
  test::GroupRun run;
  run.job = "replan-back";
  run.iterations = 5;
  const auto plan = test::tiny_plan(2, 2, 1);
  const auto expected = test::train_threads(plan, run);
  const auto via = with_sharding(test::tiny_plan(1, 1, 4), core::OptimizerSharding::Distributed);
  run.before = [&](hw::HwBackend& backend, int i) {
    if (i != 2) return;
    backend.apply(core::Directive{core::ReplanDirective{via}, "test", 0});
    CHECK(backend.plan().label() == via.label());
    backend.apply(core::Directive{core::ReplanDirective{plan}, "test", 0});
  };
  CHECK(test::train_threads(plan, run) == expected);
}

TEST_CASE("tp2 pp2 re-planned to dp4 mid-run trains on as dp4") {
  // After iteration 2 the job runs dp4: its losses then follow the dp4
  // job's to the rounding of the first two iterations' different sums
  // (tp's partial products, another reduction order): within 1e-4, the
  // bound the MPI check holds every plan to against one rank. And the
  // re-planned run continues from the tp2 pp2 run's state: its loss at
  // iteration 2 is the one tp2 pp2 would have had there, to the same
  // rounding (the loss is computed before the update).
  test::GroupRun run;
  run.job = "replan-mid";
  run.iterations = 6;
  const auto from = test::tiny_plan(2, 2, 1), to = test::tiny_plan(1, 1, 4);
  const auto as_from = test::train_threads(from, run);
  const auto as_to = test::train_threads(to, run);
  run.before = replan_at(2, to);
  std::vector<core::StepReport> reports;
  const auto replanned = test::train_threads(from, run, &reports);
  REQUIRE(replanned.size() == 6);
  CHECK(std::vector(replanned.begin(), replanned.begin() + 2) ==
        std::vector(as_from.begin(), as_from.begin() + 2));
  CHECK(max_rel_diff(replanned, as_to) < 1e-4);
  CHECK(max_rel_diff(replanned, as_from) < 1e-4);
  // The reports after the switch are dp4's: a dp group, no tp or pp traffic.
  CHECK(test::comm_bytes(reports.at(1), "tp[") > 0);
  CHECK(test::comm_bytes(reports.at(3), "tp[") == 0);
  CHECK(test::comm_bytes(reports.at(3), "dp[") > 0);
  CHECK(reports.at(2).warmup);  // the first iteration of the new plan
  // The switch is reported with the iteration it is charged to, once, with
  // its measured time (the slowest rank's wall clock: more than zero, and
  // no more than the iteration that includes it); the iterations around it
  // applied nothing.
  REQUIRE(reports.at(2).applied.size() == 1);
  CHECK(reports.at(2).applied.front().kind == "replan");
  CHECK(reports.at(2).applied.front().ns > 0);
  CHECK(reports.at(2).applied.front().ns <= reports.at(2).iteration_ns);
  CHECK(reports.at(1).applied.empty());
  CHECK(reports.at(3).applied.empty());
}

TEST_CASE("a re-plan the executor cannot run is refused with the field named") {
  test::GroupRun run;
  run.job = "replan-bad";
  run.iterations = 1;
  auto cp2 = test::tiny_plan(1, 2, 1);
  cp2.cp = 2;
  auto fsdp = with_sharding(test::tiny_plan(1, 1, 4), core::OptimizerSharding::Fsdp);
  const auto eight = test::tiny_plan(2, 2, 2);
  run.before = replan_at(0, cp2);
  CHECK_THROWS_WITH_AS(test::train_threads(test::tiny_plan(2, 2, 1), run),
                       doctest::Contains("plan.cp: context parallelism, found cp=2"),
                       core::InputError);
  run.before = replan_at(0, fsdp);
  CHECK_THROWS_WITH_AS(test::train_threads(test::tiny_plan(2, 2, 1), run),
                       doctest::Contains("plan.optimizer_sharding: expected none or distributed"),
                       core::InputError);
  run.before = replan_at(0, eight);
  CHECK_THROWS_WITH_AS(test::train_threads(test::tiny_plan(2, 2, 1), run),
                       doctest::Contains("tp*pp*dp*cp=8 ranks, but the job has 4"),
                       core::InputError);
}

TEST_CASE("the executor tells the planner which plans it runs") {
  auto group = hw::make_thread_group(1);
  hw::HwBackend backend(test::tiny_model(), test::kTinySeq, 3, test::tiny_plan(1, 1, 1),
                        test::tiny_options(hw::OptimizerKind::Adam, "replan-caps"), *group[0]);
  const core::Capabilities caps = backend.capabilities();
  CHECK(caps.live_replan);
  REQUIRE(caps.runs_plan);
  CHECK(caps.runs_plan(test::tiny_plan(1, 1, 1)));
  auto cp2 = test::tiny_plan(1, 1, 1);
  cp2.cp = 2;
  CHECK_FALSE(caps.runs_plan(cp2));                       // context parallelism
  CHECK_FALSE(caps.runs_plan(test::tiny_plan(1, 1, 2)));  // 2 ranks on a job of 1
  backend.remove_snapshots();
}

TEST_CASE(
    "after a live re-plan, a relaunch under the old plan restores the new plan's shards "
    "resharded") {
  // tp2 pp2 snapshots v1, re-plans to dp4 and snapshots v2 and v3: two
  // versions are kept per rank, so v1 is gone and the dp4 shards are
  // refused as another plan's. A relaunch under tp2 pp2 has no version of
  // its own plan; other_plan_snapshot() names the plan the shards were
  // written under, and the newest of them, v3, is complete: run --restore
  // restores it resharded (tests/hw/reshard_restore_test.cpp).
  auto group = hw::make_thread_group(4);
  const auto from = test::tiny_plan(2, 2, 1), to = test::tiny_plan(1, 1, 4);
  test::run_ranks(4, [&](int r) {
    const auto options = test::tiny_options(hw::OptimizerKind::Adam, "replan-relaunch");
    auto& world = *group[static_cast<std::size_t>(r)];
    {
      hw::HwBackend first(test::tiny_model(), test::kTinySeq, 3, from, options, world);
      first.step(first.plan());
      first.apply({core::SnapshotDirective{1}, "test", 0});
      first.apply({core::ReplanDirective{to}, "test", 0});
      for (const long long v : {2, 3}) {
        first.step(first.plan());
        first.apply({core::SnapshotDirective{v}, "test", 0});
      }
    }
    hw::HwBackend again(test::tiny_model(), test::kTinySeq, 3, from, options, world);
    CHECK_FALSE(again.newest_restorable_snapshot());
    const auto other = again.other_plan_snapshot();
    REQUIRE(other);
    CHECK(other->find("written under plan '" + to.label() + "'") != std::string::npos);
    CHECK(again.newest_resharded_snapshot() == 3);
    again.remove_snapshots();
  });
}
