// Unit tests of the controller's pieces: the balancing solvers, the move
// cost, the policy section reader, node and link stragglers, noise filtering.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "contract_support.hpp"
#include "controller_contract.hpp"
#include "core/controller/balancer.hpp"
#include "core/controller/controller.hpp"
#include "core/controller/pipeline_model.hpp"
#include "core/controller/policy_registry.hpp"
#include "core/controller/state_estimate.hpp"
#include "core/input_error.hpp"
#include "fake_backend.hpp"

using namespace parashift;
using core::StragglerFinding;

namespace {

using test::policy_error;

core::JobModel flat_job(int pp, int dp, int layers, int global_batch) {
  core::JobModel job;
  job.plan.pp = pp;
  job.plan.dp = dp;
  job.plan.global_batch = global_batch;
  job.layers = layers;
  job.total_iterations = 1000;
  job.normalise();
  return job;
}

// pp stages, one replica, 8 micro-batches (the contract's re-partition plan).
core::ParallelPlan pipeline_plan(int pp) {
  core::ParallelPlan plan;
  plan.pp = pp;
  plan.global_batch = 8;
  return plan;
}

// A report where every rank computes `ns`, except `slow` ranks at `factor` x.
core::StepReport report(int ranks, std::int64_t iteration, core::TimeNs ns,
                        const std::vector<int>& slow = {}, double factor = 1) {
  core::StepReport r;
  r.iteration = iteration;
  r.iteration_ns = ns;
  r.rank_compute_ns.assign(static_cast<std::size_t>(ranks), ns);
  for (int s : slow) {
    r.rank_compute_ns[static_cast<std::size_t>(s)] =
        static_cast<core::TimeNs>(static_cast<double>(ns) * factor);
  }
  return r;
}

}  // namespace

TEST_CASE("marginal allocation finds the minimal slowest stage, within memory caps") {
  // The contract's hand case: per-layer times 1 and 1.5 on stage 3, 31 layers:
  // 4 on each healthy stage (4.0), 3 on stage 3 (4.5).
  const std::vector<double> cost{1, 1, 1, 1.5, 1, 1, 1, 1};
  const std::vector<double> fixed(8, 0.0);
  const std::vector<int> free_caps(8, 31);
  CHECK(core::balanced_stage_layers(cost, fixed, 31, 1, free_caps) ==
        std::vector<int>{4, 4, 4, 3, 4, 4, 4, 4});
  // Memory caps stage 0 at 3 layers: at times <= 4.5 the stages hold
  // 3 + 6 x 4 + 3 = 30; the 31st goes where it costs least, 5.0 on a healthy
  // stage, the lowest such: stage 1.
  std::vector<int> caps = free_caps;
  caps[0] = 3;
  CHECK(core::balanced_stage_layers(cost, fixed, 31, 1, caps) ==
        std::vector<int>{3, 5, 4, 3, 4, 4, 4, 4});
  // A fixed 2-layer head on the last stage: at 4.5 the last stage holds
  // floor((4.5 - 2) / 1) = 2 layers, so 6 x 4 + 3 + 2 = 29; the next two
  // layers at 5.0 go to stages 0 and 1.
  std::vector<double> head = fixed;
  head[7] = 2;
  CHECK(core::balanced_stage_layers(cost, head, 31, 1, free_caps) ==
        std::vector<int>{5, 5, 4, 3, 4, 4, 4, 2});
  // Caps that cannot hold the model: no split.
  CHECK(core::balanced_stage_layers(cost, fixed, 31, 1, std::vector<int>(8, 3)).empty());
}

TEST_CASE("stage layer counts become per-virtual-stage counts, chunk k of stage s at k*pp+s") {
  // Stage 0 holds 5 layers in 2 chunks (3, 2), stage 1 holds 3 (2, 1):
  // virtual stages [s0c0, s1c0, s0c1, s1c1].
  CHECK(core::chunk_split({5, 3}, 2) == std::vector<int>{3, 2, 2, 1});
  CHECK(core::chunk_split({4, 3}, 1) == std::vector<int>{4, 3});
}

TEST_CASE("move cost: the GPU that sends or receives the most layers, at the move bandwidth") {
  core::JobModel job = flat_job(4, 1, 16, 4);
  job.params_per_gpu_layer = 5e8;
  // [4,4,4,4] -> [2,6,4,4]: layers 2 and 3 move from stage 0 to stage 1; stage
  // 0 sends 2, stage 1 receives 2: 2 x 5e8 x 16 B = 16 GB at 50 GB/s = 0.32 s.
  const auto cost = core::repartition_cost(job, {4, 4, 4, 4}, {2, 6, 4, 4}, core::gbps(400));
  CHECK(cost.layers_moved == 2);
  CHECK(cost.busiest_stage_layers == 2);
  CHECK(cost.bytes_per_gpu == doctest::Approx(16e9));
  CHECK(cost.seconds == doctest::Approx(0.32));
  // [4,4,4,4] -> [3,4,4,5]: layers 3, 7, 11 each shift one stage down, every
  // stage sends or receives one: 1 x 8 GB / 50 GB/s = 0.16 s.
  const auto shift = core::repartition_cost(job, {4, 4, 4, 4}, {3, 4, 4, 5}, core::gbps(400));
  CHECK(shift.layers_moved == 3);
  CHECK(shift.seconds == doctest::Approx(0.16));
}

TEST_CASE("micro-batch caps follow memory: GPipe holds every micro-batch, 1F1B at most pp - s") {
  core::JobModel job = flat_job(2, 2, 4, 16);  // 8 micro-batches per replica, 2 layers per stage
  job.activation_bytes_per_layer = 1e9;
  job.memory_limit_bytes = 20e9;
  core::StageCosts costs;
  costs.stages = 2;
  costs.replicas = 2;
  costs.layer_ns.assign(4, 1.0);
  costs.fixed_ns.assign(2, 0.0);
  // Measured: 10 GB on every GPU under 1F1B. Stage 0 holds min(8, 2) = 2
  // micro-batches x 2 layers x 1 GB = 4 GB of activations, 6 GB besides; its
  // ceiling of 2 in flight fits 20 GB at any m: no cap.
  costs.memory_bytes.assign(4, 10e9);
  CHECK(core::micro_batch_caps(job, costs) ==
        std::vector<int>{std::numeric_limits<int>::max(), std::numeric_limits<int>::max()});
  // GPipe holds all 8 micro-batches: of 18 GB measured, 8 x 2 GB = 16 GB are
  // activations, 2 GB besides; (20 - 2) / 2 GB = 9 micro-batches at most.
  job.plan.schedule = core::Schedule::GPipe;
  costs.memory_bytes.assign(4, 18e9);
  CHECK(core::micro_batch_caps(job, costs) == std::vector<int>{9, 9});
}

TEST_CASE("micro-batch balancing in steps of pp for interleaved 1F1B") {
  // 2 stages x 2 replicas, 2 layers a stage, replica 1 twice as slow; 16
  // micro-batches. In steps of 2 every count is even, the total is kept, and
  // no other even split has a lower slowest replica (checked by trying them
  // all); steps of 1 can only do as well or better.
  core::StageCosts costs;
  costs.stages = 2;
  costs.replicas = 2;
  costs.layer_ns = {1.0, 1.0, 2.0, 2.0};
  costs.fixed_ns.assign(2, 0.0);
  const std::vector<int> layers{2, 2};
  const std::vector<int> caps(2, std::numeric_limits<int>::max());
  auto slowest = [&](const std::vector<int>& m) {
    return std::max(core::replica_time_ns(costs, layers, 0, m[0]),
                    core::replica_time_ns(costs, layers, 1, m[1]));
  };
  const auto even = core::balanced_micro_batches(costs, layers, 16, caps, {8, 8}, 2);
  REQUIRE(even.size() == 2);
  CHECK(even[0] % 2 == 0);
  CHECK(even[1] % 2 == 0);
  CHECK(even[0] + even[1] == 16);
  CHECK(even[0] > even[1]);  // the fast replica takes more
  for (int m0 = 2; m0 <= 14; m0 += 2) CHECK(slowest(even) <= slowest({m0, 16 - m0}));
  const auto any = core::balanced_micro_batches(costs, layers, 16, caps, {8, 8});
  CHECK(any[0] + any[1] == 16);
  CHECK(slowest(any) <= slowest(even));
}

TEST_CASE("FSDP: a slow replica keeps its micro-batches (every replica runs the same passes)") {
  // The contract's re-balance case (pp 2, dp 4, one layer a stage, replica 1
  // at 2x) re-balances to {8, 4, 8, 8} with sharding off; under FSDP every
  // pass gathers over the data-parallel group, so no re-balance is issued,
  // and with one layer a stage no re-partition either: nothing at all.
  for (const auto sharding :
       {core::OptimizerSharding::Distributed, core::OptimizerSharding::Fsdp}) {
    CAPTURE(core::to_string(sharding));
    auto plan = test::contract_plan(2, 4, 28);
    plan.optimizer_sharding = sharding;
    test::FakeHarness h(test::ContractCase{plan, 2});
    h.slow_down(1, 2.0);
    core::Controller ctl(h.job(1000),
                         test::policy_from_yaml("{straggler: {}, balance: {min_gain_s: 1}}"),
                         h.backend().capabilities());
    for (int i = 0; i < 30; ++i) ctl.step(h.backend());
    const auto directives = test::issued(ctl);
    if (sharding == core::OptimizerSharding::Fsdp) {
      CHECK(directives.empty());
      CHECK(h.micro_batches() == std::vector<int>{7, 7, 7, 7});
    } else {
      REQUIRE(directives.size() == 1);
      CHECK(std::holds_alternative<core::RebalanceDirective>(directives[0].action));
    }
  }
}

TEST_CASE("policy section: defaults, knobs and located errors") {
  const auto config = test::policy_from_yaml(
      "window: 7\n"
      "straggler: {threshold: 1.2, patience: 4}\n"
      "balance: {enabled: false, min_gain_s: 30, rebalance: false}\n");
  CHECK(config.window == 7);
  REQUIRE(config.find("straggler") != nullptr);
  CHECK(config.enabled("straggler"));  // named without `enabled`: on
  CHECK(config.find("straggler")->knob("threshold") == 1.2);
  CHECK(config.find("straggler")->knob("patience") == 4);
  CHECK_FALSE(config.enabled("balance"));
  CHECK(config.find("balance")->knob("min_gain_s") == 30);
  CHECK_FALSE(config.find("balance")->flag("rebalance"));
  CHECK(config.find("balance")->flag("repartition"));  // default
  CHECK(config.find("balance")->knob("move_bandwidth_gbps") == 400);

  const auto empty = test::policy_from_yaml("{}");
  CHECK(empty.window == 5);
  CHECK_FALSE(empty.enabled("straggler"));
  CHECK_FALSE(empty.enabled("balance"));

  CHECK(policy_error("strager: {}\n") ==
        "scenario.yaml:1:10: policy.strager: unknown policy module 'strager' (expected one of: "
        "window, template, plugins, rules, calibrate, straggler, balance, sync, aggregation, "
        "migrate, replan, batch)");
  CHECK(policy_error("straggler:\n  treshold: 1.2\n") ==
        "scenario.yaml:2:3: policy.straggler.treshold: unknown field (did you mean "
        "'threshold'? expected one of: enabled, threshold, patience)");
  CHECK(policy_error("straggler: {threshold: 0.9}\n") ==
        "scenario.yaml:1:24: policy.straggler.threshold: expected a number in [1.01, 100], found "
        "'0.9'");
  CHECK(policy_error("straggler: {patience: 2.5}\n") ==
        "scenario.yaml:1:23: policy.straggler.patience: expected an integer in [1, 1000], found "
        "'2.5'");
  CHECK(policy_error("aggregation: {threshold: 0}\n") ==
        "scenario.yaml:1:26: policy.aggregation.threshold: expected a number in [0.01, 1], found "
        "'0'");
  CHECK(policy_error("balance: {rebalance: maybe}\n") ==
        "scenario.yaml:1:22: policy.balance.rebalance: expected true or false, found 'maybe'");
  CHECK(policy_error("window: 16\n") ==
        "scenario.yaml:1:9: policy.window: expected an integer in [1, 15], found '16'");
  // A module is a map of knobs, or on/off.
  CHECK(policy_error("balance: 3\n") ==
        "scenario.yaml:1:10: policy.balance: expected true or false, found '3'");
}

TEST_CASE("modules are registered by name with a description, in the order they run") {
  const auto registry = core::builtin_policy_registry();
  CHECK(registry.names() ==
        "calibrate, straggler, balance, sync, aggregation, migrate, replan, batch");
  for (const auto& m : registry.modules()) {
    CHECK_FALSE(m.description.empty());
    for (const auto& k : m.knobs) CHECK_FALSE(k.description.empty());
  }
}

TEST_CASE("a whole slow node is named as the node, and a slow link by its delivered rate") {
  // 24 ranks, 8 per node (pp 1, dp 24); node 1 (ranks 8..15) at 1.3x.
  core::JobModel job = flat_job(1, 24, 4, 24);
  core::Capabilities caps;
  caps.link_telemetry = true;
  core::Controller ctl(job, test::policy_from_yaml("{straggler: {}}"), caps);
  // The same reports to a controller whose backend says it has no link
  // telemetry: the links are not judged, the node is.
  core::Controller blind(job, test::policy_from_yaml("{straggler: {}}"), core::Capabilities{});
  std::vector<int> node1;
  for (int r = 8; r < 16; ++r) node1.push_back(r);
  for (int i = 0; i < 10; ++i) {
    auto r = report(24, i, 4'000'000, node1, 1.3);
    // Two links each carry 1 GB in 10% of the iteration; from iteration 3 link
    // b is busy twice as long for the same bytes: half its best rate.
    r.links = {{"a", 1e9, 0.1}, {"b", 1e9, i >= 3 ? 0.2 : 0.1}};
    ctl.observe(r);
    blind.observe(r);
  }
  REQUIRE(blind.stragglers().size() == 1);
  CHECK(blind.stragglers()[0].kind == StragglerFinding::Kind::Node);
  // Window full at 4: node 1's medians are 1.3x the median rank (16 of 24 are
  // healthy); link b's median halves at 5 (samples 3, 4, 5 of 1..5) below its
  // best (iteration 4's). Patience 3: the node is named at 6, the link at 7.
  REQUIRE(ctl.stragglers().size() == 2);
  CHECK(ctl.stragglers()[0].kind == StragglerFinding::Kind::Node);
  CHECK(ctl.stragglers()[0].id == 1);
  CHECK(ctl.stragglers()[0].slowdown == doctest::Approx(1.3));
  CHECK(ctl.stragglers()[0].since_iteration == 6);
  CHECK(ctl.stragglers()[1].kind == StragglerFinding::Kind::Link);
  CHECK(ctl.stragglers()[1].link == "b");
  CHECK(ctl.stragglers()[1].slowdown == doctest::Approx(2.0));
  CHECK(ctl.stragglers()[1].since_iteration == 7);
  CHECK(ctl.stragglers()[1].describe() == "link b 2x slower");
}

TEST_CASE("single-iteration spikes move nothing, a cleared straggler is logged as recovered") {
  core::JobModel job = flat_job(1, 8, 4, 8);
  core::Capabilities caps;
  core::Controller ctl(job, test::policy_from_yaml("{straggler: {}}"), caps);
  std::int64_t i = 0;
  // Rank 2 spikes to 3x every third iteration up to 50: a window of 5 holds at
  // most 2 spikes, so its median (the 3rd value) stays nominal.
  for (; i < 60; ++i) {
    const bool spike = i < 50 && i % 3 == 0;
    ctl.observe(report(8, i, 1'000'000, spike ? std::vector<int>{2} : std::vector<int>{}, 3.0));
  }
  CHECK(ctl.stragglers().empty());
  // A lasting 1.5x on rank 2 from 60: flagged at 64; back to normal from 70:
  // the median clears (< (1 + 1.15) / 2 = 1.075) at 72, patience 3 -> cleared at 74.
  for (; i < 70; ++i) ctl.observe(report(8, i, 1'000'000, {2}, 1.5));
  REQUIRE(ctl.stragglers().size() == 1);
  CHECK(ctl.stragglers()[0].since_iteration == 64);
  for (; i < 80; ++i) ctl.observe(report(8, i, 1'000'000));
  CHECK(ctl.stragglers().empty());
  REQUIRE(ctl.log().size() == 2);
  CHECK(ctl.log()[0].message == "gpu 2 1.5x slower");
  CHECK(ctl.log()[1].iteration == 74);
  CHECK(ctl.log()[1].message == "gpu 2 recovered");
}

TEST_CASE("a machine-wide speed change does not turn one rank's spike into a straggler") {
  // 8 ranks (pp 1, dp 8, 4 layers, one micro-batch each), window 5. Every
  // rank computes 4 ms (1 ms per layer) up to report 4 and 8 ms from report 5
  // on (the whole machine twice as slow); rank 2 alone spikes to 1.8x once,
  // at report 4.
  const core::JobModel job = flat_job(1, 8, 4, 8);
  core::StateEstimate state(job.plan, 5);
  for (std::int64_t i = 0; i < 8; ++i) {
    const core::TimeNs ns = i < 5 ? 4'000'000 : 8'000'000;
    state.add(report(8, i, ns, i == 4 ? std::vector<int>{2} : std::vector<int>{}, 1.8), job);
    CAPTURE(i);
    const auto& u = state.layer_ns();
    // Compared within each report, rank 2 is 1.8x once and 1x otherwise: a
    // window holds that one outlier at most, so its median is 1x, and every
    // rank's estimate is the level. (Filtering each rank's own samples would
    // read rank 2 at 1.8x at report 6: the window 2..6 holds its 1, 1, 1.8,
    // 2, 2 ms, whose median is the spike, while the others' is 1 ms.)
    CHECK(*std::max_element(u.begin(), u.end()) == *std::min_element(u.begin(), u.end()));
    // The level: the median of the window's per-report median ranks, 1 ms
    // until three of its five reports are slow (5, 6, 7 at report 7), then 2 ms.
    CHECK(state.median_layer_ns() == doctest::Approx(i < 7 ? 1e6 : 2e6));
    CHECK(u[2] == doctest::Approx(state.median_layer_ns()));
  }
}

// Report of 16 ranks at 1 ms per layer (4 layers) where a burst of machine
// noise scrambles them: rank k runs 0.7x, 1.3x, 0.8x, 1.2x by k % 4, rank 3
// 1.6x, and every rank in `slow` another `factor` x.
core::StepReport burst_report(std::int64_t iteration, const std::vector<int>& slow = {},
                              double factor = 1) {
  core::StepReport r = report(16, iteration, 4'000'000, slow, factor);
  constexpr double kScramble[4] = {0.7, 1.3, 0.8, 1.2};
  for (std::size_t k = 0; k < 16; ++k) {
    r.rank_compute_ns[k] = static_cast<core::TimeNs>(static_cast<double>(r.rank_compute_ns[k]) *
                                                     (k == 3 ? 1.6 : kScramble[k % 4]));
  }
  return r;
}

TEST_CASE("a burst that scrambles most ranks names no one and does not clear a straggler") {
  // 16 ranks (pp 1, dp 16, 4 layers), every rank 4 ms, window 5.
  const core::JobModel job = flat_job(1, 16, 4, 16);
  core::Capabilities caps;
  core::Controller ctl(job, test::policy_from_yaml("{straggler: {}}"), caps);
  std::int64_t i = 0;
  for (; i < 10; ++i) ctl.observe(report(16, i, 4'000'000));
  // Reports 10-12 are bursts. Sorted, the 16 times are 0.7 x4, 0.8 x4, 1.2 x3,
  // 1.3 x4, 1.6; the median rank (the lower middle, 8th) is at 0.8. Over it
  // ranks read 0.875, 1.625, 1 and 1.5 by k % 4, rank 3 2. The spread, the
  // median rank's |relative - 1| (8th of 0 x4, 0.125 x4, 0.5 x3, 0.625 x4,
  // 1), is 0.125: over 3 x the usual 0 and over the 2% floor. Counted as
  // samples, the 8 ranks at 1.5x and more would be named at 14 (over 1.15 at
  // 12, 13, 14).
  for (; i < 13; ++i) ctl.observe(burst_report(i));
  for (; i < 20; ++i) ctl.observe(report(16, i, 4'000'000));
  CHECK(ctl.state().bursts() == 3);
  CHECK(ctl.stragglers().empty());
  CHECK(ctl.log().empty());
  // Rank 5 at 1.5x from report 20: its median moves at 22 (3 of 5), named at 24.
  for (; i < 25; ++i) ctl.observe(report(16, i, 4'000'000, {5}, 1.5));
  REQUIRE(ctl.stragglers().size() == 1);
  CHECK(ctl.stragglers()[0].id == 5);
  CHECK(ctl.stragglers()[0].since_iteration == 24);
  // A burst at 25-27 is no sample either: rank 5's window still holds only
  // its slow reports, so it is not cleared (that takes 3 windows below 1.075).
  for (; i < 28; ++i) ctl.observe(burst_report(i, {5}, 1.5));
  for (; i < 32; ++i) ctl.observe(report(16, i, 4'000'000, {5}, 1.5));
  CHECK(ctl.state().bursts() == 6);
  REQUIRE(ctl.stragglers().size() == 1);
  CHECK(ctl.stragglers()[0].slowdown == doctest::Approx(1.5));
  REQUIRE(ctl.log().size() == 1);
  CHECK(ctl.log()[0].message == "gpu 5 1.5x slower");
}

TEST_CASE("half the ranks slow, one stage of two, are named at their slowdown") {
  // pp 2 x dp 4, 8 layers (4 per stage), 8 micro-batches (2 per replica);
  // stage 1 (ranks 4-7) at 1.3x from report 10. The median rank is the lower
  // middle of 8, a healthy one, so stage 1 reads 1.3 (the upper middle would
  // be a slow one and make stage 1 read 1, never named); the spread is the
  // 4th smallest of 0 x4, 0.3 x4: 0, no burst. Medians move at 12, named at
  // 14, as four GPUs (half of node 0: no node finding).
  const core::JobModel job = flat_job(2, 4, 8, 8);
  core::Capabilities caps;
  core::Controller ctl(job, test::policy_from_yaml("{straggler: {}}"), caps);
  std::int64_t i = 0;
  for (; i < 10; ++i) ctl.observe(report(8, i, 8'000'000));
  for (; i < 15; ++i) ctl.observe(report(8, i, 8'000'000, {4, 5, 6, 7}, 1.3));
  CHECK(ctl.state().bursts() == 0);
  REQUIRE(ctl.stragglers().size() == 4);
  for (std::size_t k = 0; k < 4; ++k) {
    CHECK(ctl.stragglers()[k].kind == StragglerFinding::Kind::Gpu);
    CHECK(ctl.stragglers()[k].id == static_cast<int>(4 + k));
    CHECK(ctl.stragglers()[k].since_iteration == 14);
    CHECK(ctl.stragglers()[k].slowdown == doctest::Approx(1.3));
  }
}

TEST_CASE("balance patience: a change is applied once it has been the best that long") {
  // The contract's re-partition case (pp 8, 31 layers, stage 3 at 1.5x) on
  // the fake backend; `recover_at` ends the slowdown before that iteration.
  // Returns the controller's iteration of each directive.
  auto run = [](int patience, int iterations, int recover_at) {
    test::FakeHarness h(test::ContractCase{pipeline_plan(8), 31});
    h.slow_down(3, 1.5);
    core::Controller ctl(h.job(1000),
                         test::policy_from_yaml("{balance: {min_gain_s: 1, patience: " +
                                                std::to_string(patience) + "}}"),
                         h.backend().capabilities());
    for (int i = 0; i < iterations; ++i) {
      if (i == recover_at) h.slow_down(3, 1.0);
      ctl.step(h.backend());
    }
    std::vector<std::int64_t> applied;
    for (const auto& d : ctl.log())
      if (d.applied) applied.push_back(d.iteration);
    return applied;
  };
  // The first full window is iteration 4 and the change is the best from then
  // on, so with patience p it is applied at 4 + p - 1.
  for (const int patience : {1, 3, 5}) {
    CAPTURE(patience);
    CHECK(run(patience, 12, -1) == std::vector<std::int64_t>{4 + patience - 1});
  }
  // A spell: stage 3 slow for iterations 0-5 only. Its reports 0-5 are slow,
  // so a 5-report window holds 3 or more of them, and the median is slow, up
  // to iteration 7 (reports 3-7); from 8 on it is healthy. The change is the
  // best at 4, 5, 6, 7: four iterations. Patience 5 lets the spell pass;
  // patience 3 acts on it at 6, as patience 1 would at 4.
  CHECK(run(5, 20, 6).empty());
  CHECK(run(3, 20, 6) == std::vector<std::int64_t>{6});
}
