// The controller contract: the same cases on every Backend, through a harness
// per backend type. A harness H provides
//   explicit H(const ContractCase&);          // a healthy job
//   core::Backend& backend();
//   void slow_down(int rank, double factor);  // from the next step on
//   core::JobModel job(std::int64_t total_iterations) const;
//   core::TimeNs layer_ns() const;            // one layer, one micro-batch, fwd + bwd
//   std::vector<int> layers_per_virtual_stage() const;  // as the backend now runs
//   std::vector<int> micro_batches() const;             // per replica
//   static constexpr bool kMeasured;  // see below
// The cases assume a stage's work is proportional to its layers (no embedding
// or head time).
//
// kMeasured is false where each rank's compute is drawn with the +-3% jitter
// the cases are written for (the fake, the simulator), and true where it is
// measured on a machine (the hw executor). A measured machine's noise is what
// the machine does: on the 2-core dev VM most samples are within +-3%, but
// single iterations reach +-25% and a core's speed can drift for seconds.
// Checks whose exact numbers come from the +-3% bound say what they widen to
// for measured backends, and why; everything else is checked alike.
//
// Run them on a harness with
//   PARASHIFT_CONTROLLER_CONTRACT(MyHarness);
// in one test source of the suite that links the backend.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "contract_support.hpp"
#include "core/controller/controller.hpp"
#include "core/controller/job_runner.hpp"
#include "core/rank_layout.hpp"
#include "core/snapshot/shrink.hpp"
#include "fake_backend.hpp"

namespace parashift::test {

inline core::ParallelPlan contract_plan(int pp, int dp, int global_batch) {
  core::ParallelPlan plan;
  plan.pp = pp;
  plan.dp = dp;
  plan.global_batch = global_batch;
  return plan;
}

/// The balancing cases' policy. The gate on gain (min_gain_s) sits well
/// below the gains they derive, 11 and 6 layer times per iteration over 993
/// iterations: 10.9 s and 6 s at the fake's 1 ms layers, gated at 1 s; 0.66 s
/// and 0.36 s at the hw harness's ~60 us layers, gated at 0.1 s.
template <class H>
std::string balance_policy() {
  return std::string("{straggler: {}, balance: {min_gain_s: ") + (H::kMeasured ? "0.1" : "1") +
         "}}";
}

/// Directives the controller issued, from its log.
inline std::vector<core::Directive> issued(const core::Controller& ctl) {
  std::vector<core::Directive> out;
  for (const auto& d : ctl.log()) {
    if (d.applied && d.directive) out.push_back(*d.directive);
  }
  return out;
}

}  // namespace parashift::test

TEST_CASE_TEMPLATE_DEFINE("contract: a 1.5x and a 2x slow GPU are named within 10 iterations", H,
                          contract_detects_slow_gpu) {
  using namespace parashift;
  for (const double factor : {1.5, 2.0}) {
    CAPTURE(factor);
    // 16 ranks (pp 4 x dp 4, tp 1), 8 layers per stage, 8 micro-batches.
    H h(test::ContractCase{test::contract_plan(4, 4, 32), 32});
    core::Controller ctl(h.job(1000), test::policy_from_yaml("{straggler: {}}"),
                         h.backend().capabilities());
    const int onset = 20;
    const int slow_rank = 5;
    int named_at = -1;
    for (int i = 0; i < 40 && named_at < 0; ++i) {
      if (i == onset) h.slow_down(slow_rank, factor);
      ctl.step(h.backend());
      if (!ctl.stragglers().empty()) named_at = i;
    }
    // Reports 20, 21, 22 are slow: at 22 three of the window's five samples
    // (18..22) are, so the median moves (ratio >= 1.5 x 0.97 / 1.03 = 1.41 >
    // 1.15). Patience 3: iterations 22, 23, 24 over the threshold -> named at
    // 24, four iterations after onset (limit: 10).
    // Measured: with two slow samples in the window (report 21) the median is
    // the largest of the three healthy ones, which a +-25% iteration can lift
    // over 1.15, so it may be named one or two reports earlier; never before
    // onset + 2, the third slow report (earlier would be a false alarm).
    if constexpr (H::kMeasured) {
      CHECK(named_at >= onset + 2);
    } else {
      CHECK(named_at == onset + 4);
    }
    CHECK(named_at - onset <= 10);
    REQUIRE(ctl.stragglers().size() == 1);
    const auto& f = ctl.stragglers()[0];
    CHECK(f.kind == core::StragglerFinding::Kind::Gpu);
    CHECK(f.id == slow_rank);
    // Median filtering leaves at most the +-3% jitter on each side: 1.5 (2.0) +-6%.
    // Measured: a healthy median's +-3% on either side plus the sample that
    // may set the median (above): +-10%.
    CHECK(f.slowdown == doctest::Approx(factor).epsilon(H::kMeasured ? 0.10 : 0.06));
    CHECK(ctl.directives_issued() == 0);  // the balancer is off
  }
}

TEST_CASE_TEMPLATE_DEFINE("contract: 1,000 healthy iterations decide nothing", H,
                          contract_healthy_is_quiet) {
  using namespace parashift;
  H h(test::ContractCase{test::contract_plan(4, 4, 32), 32});
  // Both modules on; a long run so that any real gain would pay for itself.
  // Measured: the noise is the machine's, not the fake's +-3%: on the dev VM
  // 2-6% of the samples are 1.15x their iteration's median rank or more,
  // mostly in bursts of a few iterations that scramble most ranks (no
  // samples: state_estimate.hpp), but also in smaller spells, as when one
  // replica runs 1.2-1.3x in 2 of 3 iterations. A median over the default 5
  // iterations, moved by 3 slow samples, named a healthy rank in 1 of 6
  // recorded 1,000-iteration runs; over 7, moved by 4, in none
  // (tests/core/controller/measured_trace_test.cpp replays all six). A
  // machine this noisy runs with `window: 7`; the checks are the same.
  const std::string window = H::kMeasured ? "window: 7, " : "";
  core::Controller ctl(h.job(1'000'000),
                       test::policy_from_yaml("{" + window + "straggler: {}, balance: {}}"),
                       h.backend().capabilities());
  for (int i = 0; i < 1000; ++i) ctl.step(h.backend());
  // Fake: medians of +-3% noise differ by < 6% between ranks (below 1.15); moving a
  // layer changes a stage by 1/8 = 12.5% and a micro-batch a replica by
  // 1/11 = 9% (T = (m + p - 1) t), both above what the noise can offset.
  CHECK(ctl.directives_issued() == 0);
  CHECK(ctl.stragglers().empty());
  CHECK(ctl.log().empty());
}

TEST_CASE_TEMPLATE_DEFINE("contract: 8 stages, one at 1.5x, re-partition to [4,4,4,3,4,4,4,4]", H,
                          contract_repartition) {
  using namespace parashift;
  // pp 8, dp 1, 31 layers: the even split is [4,4,4,4,4,4,4,3]; 8 micro-batches.
  H h(test::ContractCase{test::contract_plan(8, 1, 8), 31});
  h.slow_down(3, 1.5);  // stage 3's only GPU, from the start
  core::Controller ctl(h.job(1000), test::policy_from_yaml(test::balance_policy<H>()),
                       h.backend().capabilities());
  for (int i = 0; i < 30; ++i) ctl.step(h.backend());
  const auto directives = test::issued(ctl);
  REQUIRE(directives.size() == 1);
  const auto* r = std::get_if<core::RepartitionDirective>(&directives[0].action);
  REQUIRE(r != nullptr);
  // Per-layer times (units of layer_ns): 1 on healthy stages, 1.5 on stage 3.
  // Minimise the slowest stage over 31 layers: healthy stages can hold 4 layers
  // within 4.5 and stage 3 holds 3 (4.5); 7 x 4 + 3 = 31 exactly, and any other
  // split puts 5 layers (5.0) or 4 slow layers (6.0) somewhere. Unique optimum:
  CHECK(r->layers_per_stage == std::vector<int>{4, 4, 4, 3, 4, 4, 4, 4});
  CHECK(h.layers_per_virtual_stage() == r->layers_per_stage);
  // Iteration (m - 1) x slowest + sum: before 7 x 6 + (6 x 4 + 3 + 6) = 75, after
  // 7 x 4.5 + (7 x 4 + 4.5) = 64: 11 layer_ns saved per iteration. First the
  // best at iteration 4 (first full window), applied after the balancer's
  // patience of 3 at iteration 6, with 1000 - 7 = 993 iterations left.
  const double layer_s = static_cast<double>(h.layer_ns()) * 1e-9;
  const auto entry = std::find_if(ctl.log().begin(), ctl.log().end(),
                                  [](const core::Decision& d) { return d.applied; });
  REQUIRE(entry != ctl.log().end());
  CHECK(entry->iteration == 6);
  CHECK(entry->gain_s == doctest::Approx(11 * layer_s * 993).epsilon(0.15));
  // Layers 15, 19, 23, 27 each move one stage down: every stage from 3 to 7
  // sends or receives one layer: 1e8 params x 16 B = 1.6 GB at 400 Gb/s
  // (50 GB/s) = 0.032 s, net of which the directive's gain is stated.
  CHECK(entry->cost_s == doctest::Approx(0.032));
  CHECK(directives[0].predicted_gain_s == doctest::Approx(entry->gain_s - 0.032));
}

TEST_CASE_TEMPLATE_DEFINE("contract: re-balance gives the slow replica fewer micro-batches", H,
                          contract_rebalance) {
  using namespace parashift;
  // pp 2, dp 4, one layer per stage, 28 sequences = 7 micro-batches per replica.
  H h(test::ContractCase{test::contract_plan(2, 4, 28), 2});
  h.slow_down(1, 2.0);  // rank 1 = replica 1, stage 0 (rank = dp + 4 x pp)
  core::Controller ctl(h.job(1000), test::policy_from_yaml(test::balance_policy<H>()),
                       h.backend().capabilities());
  for (int i = 0; i < 30; ++i) ctl.step(h.backend());
  const auto directives = test::issued(ctl);
  REQUIRE(directives.size() == 1);
  const auto* b = std::get_if<core::RebalanceDirective>(&directives[0].action);
  REQUIRE(b != nullptr);
  // Replica times (layer_ns units), T = (m - 1) x slowest stage + sum of stages:
  // healthy (m - 1) + 2 = m + 1, slow (m - 1) x 2 + 3 = 2m + 1. Now 15 (slow,
  // m = 7). Within T = 9: healthy m <= 8, slow m <= 4: 3 x 8 + 4 = 28, the
  // whole batch; T = 8 holds only 3 x 7 + 3 = 24. Unique optimum:
  CHECK(b->micro_batches == std::vector<int>{8, 4, 8, 8});
  CHECK(std::accumulate(b->micro_batches.begin(), b->micro_batches.end(), 0) == 28);
  const auto now = h.micro_batches();
  CHECK(now == b->micro_batches);
  // The global batch is exact: sum of micro-batches x micro-batch size.
  CHECK(std::accumulate(now.begin(), now.end(), 0) * h.job(1000).plan.micro_batch == 28);
  // 15 -> 9: 6 layer_ns per iteration, applied at iteration 6 (the best from
  // 4, patience 3) with 993 iterations left; nothing moves: cost 0.
  const double layer_s = static_cast<double>(h.layer_ns()) * 1e-9;
  CHECK(directives[0].predicted_gain_s == doctest::Approx(6 * layer_s * 993).epsilon(0.15));
}

TEST_CASE_TEMPLATE_DEFINE("contract: a change whose gain is below its cost is not applied", H,
                          contract_cost_gate) {
  using namespace parashift;
  // The re-partition case, with 1e9 params per GPU per layer and a 20-iteration run.
  test::ContractCase c{test::contract_plan(8, 1, 8), 31};
  c.params_per_gpu_layer = 1e9;
  H h(c);
  h.slow_down(3, 1.5);
  core::Controller ctl(h.job(20),
                       test::policy_from_yaml("{straggler: {}, balance: {min_gain_s: 0}}"),
                       h.backend().capabilities());
  for (int i = 0; i < 20; ++i) ctl.step(h.backend());
  CHECK(ctl.directives_issued() == 0);
  CHECK(h.layers_per_virtual_stage() == std::vector<int>{4, 4, 4, 4, 4, 4, 4, 3});
  // Considered at iteration 4 with 20 - 5 = 15 iterations left: gain 11 layer_ns
  // x 15 = 0.165 s; cost 1 layer x 1e9 x 16 B / 50 GB/s = 0.32 s > gain.
  const auto rejected =
      std::find_if(ctl.log().begin(), ctl.log().end(),
                   [](const core::Decision& d) { return d.module == "balance" && !d.applied; });
  REQUIRE(rejected != ctl.log().end());
  CHECK(rejected->iteration == 4);
  CHECK(rejected->cost_s == doctest::Approx(0.32));
  const double layer_s = static_cast<double>(h.layer_ns()) * 1e-9;
  CHECK(rejected->gain_s == doctest::Approx(11 * layer_s * 15).epsilon(0.15));
  CHECK(rejected->gain_s < rejected->cost_s);
  // Logged once, not every iteration it is reconsidered.
  // Measured: the layer times move with the machine's noise, and so does the
  // best re-partition (e.g. [4,4,4,2,4,4,4,5] once stage 3 measures 1.57x);
  // each different proposal is logged once when it first appears, none twice
  // in a row, and none is applied (above).
  std::vector<std::string> rejections;
  for (const auto& d : ctl.log())
    if (d.module == "balance") rejections.push_back(d.message);
  if constexpr (H::kMeasured) {
    CHECK(std::adjacent_find(rejections.begin(), rejections.end()) == rejections.end());
  } else {
    CHECK(rejections.size() == 1);
  }
}

TEST_CASE_TEMPLATE_DEFINE("contract: a re-plan pp8 -> pp4 dp2 runs the new plan live", H,
                          contract_replan) {
  using namespace parashift;
  // 31 layers on pp 8 x dp 1 (8 micro-batches), healthy; before iteration 5
  // the job is re-planned to pp 4 x dp 2 on the same 8 ranks. The backend
  // then runs the new plan's even splits, as a fresh job would: 31 layers
  // over 4 stages [8, 8, 8, 7] (the last stage short, as the re-partition
  // case's [4, ..., 4, 3]), 8 micro-batches over 2 replicas [4, 4]; and the
  // balancing policy, told of the change, finds nothing to move in the 25
  // healthy iterations after it.
  test::ContractCase c{test::contract_plan(8, 1, 8), 31};
  H h(c);
  REQUIRE(h.backend().capabilities().live_replan);
  core::Controller ctl(h.job(30), test::policy_from_yaml(test::balance_policy<H>()),
                       h.backend().capabilities());
  for (int i = 0; i < 5; ++i) ctl.step(h.backend());
  CHECK(h.layers_per_virtual_stage() == std::vector<int>{4, 4, 4, 4, 4, 4, 4, 3});
  const auto to = test::contract_plan(4, 2, 8);
  const core::Directive replan{core::ReplanDirective{to}, "contract", 0};
  h.backend().apply(replan);
  ctl.applied(replan);
  std::vector<core::StepReport> after;
  for (int i = 0; i < 25; ++i) after.push_back(ctl.step(h.backend()));
  CHECK(h.layers_per_virtual_stage() == std::vector<int>{8, 8, 8, 7});
  CHECK(h.micro_batches() == std::vector<int>{4, 4});
  CHECK(ctl.job().plan.label() == to.label());
  CHECK(ctl.directives_issued() == 0);
  // The last report has the job's 8 ranks, each computing its stage's
  // layers for its replica's 4 micro-batches: 4 x 8 layer times on the
  // first three stages, 4 x 7 on the last, so the least over the most is
  // 7/8 = 0.875, within [0.875 x 0.97 / 1.03, 0.875 x 1.03 / 0.97] =
  // [0.824, 0.929] under the +-3% jitter (a measured machine's noise is
  // wider: only below 1 is checked there, the short stage being short).
  const auto& last = after.back().rank_compute_ns;
  REQUIRE(last.size() == 8);
  const core::TimeNs most = *std::max_element(last.begin(), last.end());
  const core::TimeNs least = *std::min_element(last.begin(), last.end());
  const double ratio = static_cast<double>(least) / static_cast<double>(most);
  if constexpr (!H::kMeasured) CHECK(ratio > 0.82);
  CHECK(ratio < (H::kMeasured ? 1.0 : 0.93));
}

namespace parashift::test {

/// The contract's shrink: the running plan's shape without the replicas
/// of the stranded ranks, each replica's batch kept (what
/// core::shrink_and_replan keeps when the planner finds nothing faster; the
/// planner's own choice is tested in tests/core/snapshot).
inline std::optional<core::ShrinkResult> keep_shape_shrink(const core::ParallelPlan& current,
                                                           const std::vector<int>& stranded) {
  const core::RankLayout layout(current);
  std::vector<int> dropped;
  for (int r : stranded)
    if (std::find(dropped.begin(), dropped.end(), layout.coord(r).dp) == dropped.end())
      dropped.push_back(layout.coord(r).dp);
  if (static_cast<int>(dropped.size()) >= current.dp) return std::nullopt;
  core::ShrinkResult out;
  out.plan = current;
  out.plan.dp = current.dp - static_cast<int>(dropped.size());
  out.plan.global_batch = current.global_batch / current.dp * out.plan.dp;
  out.dropped_dp = dropped;
  out.gpus = out.plan.gpus();
  out.batch_share = static_cast<double>(out.plan.dp) / current.dp;
  return out;
}

}  // namespace parashift::test

TEST_CASE_TEMPLATE_DEFINE(
    "contract: a failed GPU's rank moves onto a spare, with none left the job shrinks", H,
    contract_recovery) {
  using namespace parashift;
  // pp 2 x dp 2 on GPUs 0-3 (rank r on GPU r: ranks 0, 1 are stage 0 of
  // replicas 0, 1; ranks 2, 3 stage 1), GPU 4 spare, 8 layers, 8
  // micro-batches; snapshots every 2 iterations, healthy.
  test::ContractCase c = test::pipeline_case(2, 2, 8, 8);
  c.spare_gpus = 1;
  H h(c);
  core::JobRunner runner(h.backend(), c.plan);
  runner.set_snapshot_every(2, "contract");
  runner.set_recovery(10);
  runner.set_shrink(test::keep_shape_shrink);
  auto run_to = [&](std::int64_t iteration) {
    while (runner.next_iteration() < iteration) REQUIRE(runner.step());
  };
  // Iterations 0-2 (v2 taken before 2); GPU 1 fails during 3: rank 1
  // moves onto GPU 4, v2 is restored, iteration 2 runs next.
  run_to(3);
  h.fail_gpu(1);
  REQUIRE(runner.step());
  CHECK(runner.restarts() == 1);
  CHECK(runner.next_iteration() == 2);
  CHECK(h.gpu_of_rank(1) == 4);
  run_to(6);
  // GPU 4, rank 1's now, fails during iteration 6 (v6 taken before it):
  // no spare is left, so replica 1 (ranks 1 and 3) is dropped: pp 2 x
  // dp 1, 4 micro-batches, on the GPUs left in order, 0 and 2; v6 is
  // restored.
  h.fail_gpu(4);
  REQUIRE(runner.step());
  CHECK(runner.restarts() == 2);
  CHECK(runner.next_iteration() == 6);
  CHECK(runner.plan().dp == 1);
  CHECK(runner.plan().global_batch == 4);
  std::vector<core::StepReport> after;
  while (runner.next_iteration() < 10) {
    REQUIRE(runner.step());
    after.push_back(*runner.last_report());
  }
  CHECK(h.gpu_of_rank(0) == 0);
  CHECK(h.gpu_of_rank(1) == 2);
  CHECK(h.micro_batches() == std::vector<int>{4});
  CHECK(h.layers_per_virtual_stage() == std::vector<int>{4, 4});
  // The shrunk job's reports have its 2 ranks.
  CHECK(after.back().rank_compute_ns.size() == 2);
  std::vector<std::string> kinds;
  for (const auto& t : runner.directives())
    if (t.source == core::DirectiveSource::Recovery)
      kinds.push_back(core::kind_name(t.directive.action));
  CHECK(kinds == std::vector<std::string>{"remap", "restore", "replan", "restore"});
}

#define PARASHIFT_CONTROLLER_CONTRACT(...)                           \
  TEST_CASE_TEMPLATE_INVOKE(contract_detects_slow_gpu, __VA_ARGS__); \
  TEST_CASE_TEMPLATE_INVOKE(contract_healthy_is_quiet, __VA_ARGS__); \
  TEST_CASE_TEMPLATE_INVOKE(contract_repartition, __VA_ARGS__);      \
  TEST_CASE_TEMPLATE_INVOKE(contract_rebalance, __VA_ARGS__);        \
  TEST_CASE_TEMPLATE_INVOKE(contract_cost_gate, __VA_ARGS__);        \
  TEST_CASE_TEMPLATE_INVOKE(contract_replan, __VA_ARGS__);           \
  TEST_CASE_TEMPLATE_INVOKE(contract_recovery, __VA_ARGS__)
