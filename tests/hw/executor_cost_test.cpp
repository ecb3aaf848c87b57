// The calibration on the CPU executor's cost model (hw/calib/executor_cost.hpp),
// deterministic: the "measured" reports are the executor's own work model
// run on a truth profile, the policy starts from a profile whose GEMMs are
// 2x too fast. What `run --backend hw --profile` does with real reports.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/controller/cost_calibration.hpp"
#include "core/controller/job_model.hpp"
#include "core/input_error.hpp"
#include "core/scenario/scenario.hpp"
#include "hw/calib/executor_cost.hpp"
#include "hw/model/layer_ops.hpp"

using namespace parashift;

namespace {

const std::string kScenario = PARASHIFT_SOURCE_DIR "/tests/hw/data/hw-cpu-2rank.yaml";

// A machine: 20 GFLOP/s GEMMs at d = 64, 40 at d = 256; every kernel 1 ns
// per element; 10 GB/s streams; a 0.6-2 GB/s all-reduce.
hw::CalibrationProfile truth_profile() {
  hw::CalibrationProfile p;
  p.ranks = 2;
  p.gemm = {{64, 64, 64, 20e9, false, false}, {256, 256, 256, 40e9, false, false}};
  p.all_reduce = {{4096, 1e-5, 0.6e9}, {65536, 5e-5, 2.0e9}};
  p.memory_Bps = 10e9;
  for (const char* k : {"gelu", "gelu_backward", "causal_softmax", "causal_softmax_backward",
                        "synthetic_data", "squared_error_loss", "adam_update", "sgd_update"})
    p.kernels.push_back({k, 1.0});
  return p;
}

// What a stage's ranks measure on the truth: the micro-batches times the
// stage's layers' forward + backward + recompute, plus the synthetic data
// (stage 0) and the loss (last stage) passes.
core::TimeNs stage_compute_ns(const core::WorkProfile& w, const core::JobModel& job, int stage) {
  const auto& l = w.layer;
  const core::TimeNs per_layer = l.forward_ns + l.backward_ns + l.recompute_ns;
  core::TimeNs fixed = 0;
  if (stage == 0) fixed += w.embedding_forward_ns + w.embedding_backward_ns;
  if (stage == job.plan.pp - 1) fixed += w.head_forward_ns + w.head_backward_ns;
  return job.micro_batches_per_replica[0] * (job.stage_layers(stage) * per_layer + fixed);
}

struct Setup {
  core::Scenario scenario;
  core::CostInputs truth, preset;
  core::JobModel job;
};

Setup setup(int pp, int dp) {
  // Two hosts (fat-tree k 2): one GPU each for 2 ranks, two for 4.
  const int per_host = pp * dp / 2;
  Setup s{core::load_scenario(kScenario,
                              {"plan.pp=" + std::to_string(pp), "plan.dp=" + std::to_string(dp),
                               "cluster.topology.gpus_per_host=" + std::to_string(per_host)}),
          {},
          {},
          {}};
  const hw::CalibrationProfile truth = truth_profile();
  hw::CalibrationProfile wrong = truth;
  for (auto& g : wrong.gemm) g.flops_per_s *= 2;  // the policy thinks GEMMs run 2x faster
  s.truth = hw::executor_cost_inputs(s.scenario, truth, hw::OptimizerKind::Adam);
  s.preset = hw::executor_cost_inputs(s.scenario, wrong, hw::OptimizerKind::Adam);
  const core::ParallelPlan& plan = s.scenario.plan;
  s.job = core::make_job_model(s.preset.model, s.preset.device, plan,
                               s.preset.work(s.preset.device, plan), s.preset.seq_len, 20, 1);
  return s;
}

}  // namespace

TEST_CASE("executor cost model: GEMMs 2x off in the profile are learnt, the warm-up is not") {
  Setup s = setup(2, 1);
  const core::ParallelPlan& plan = s.scenario.plan;
  const core::WorkProfile truth_work = s.truth.work(s.truth.device, plan);
  const core::TimeNs truth_ns = s.truth.estimate(plan).total_ns;
  // The wrong profile predicts less than the truth: its GEMMs take half the time.
  REQUIRE(s.preset.estimate(plan).total_ns < truth_ns);
  core::CostCalibration cal(s.preset, 0.9, 0.5);
  for (int k = 0; k < 10; ++k) {
    core::StepReport r;
    r.iteration = k;
    r.warmup = k == 0;
    // The warm-up iteration is 3x slower than any other (allocation, first touches).
    const int slow = k == 0 ? 3 : 1;
    for (int stage = 0; stage < plan.pp; ++stage)
      r.rank_compute_ns.push_back(slow * stage_compute_ns(truth_work, s.job, stage));
    r.iteration_ns = slow * truth_ns;
    cal.observe(r, s.job);
    // Iteration 0 is predicted and recorded but moves nothing.
    if (k == 0) CHECK(cal.factor(core::CostFactor::Gemm) == 1.0);
  }
  // Every GEMM (attention's included) is twice the preset's time: the GEMM
  // factor is 2; the prior pulls it back by well under 3%.
  CHECK(cal.factor(core::CostFactor::Gemm) == doctest::Approx(2.0).epsilon(0.03));
  CHECK(cal.factor(core::CostFactor::Attention) == doctest::Approx(1.0).epsilon(0.03));
  CHECK(static_cast<double>(cal.predict_ns(plan)) ==
        doctest::Approx(static_cast<double>(truth_ns)).epsilon(0.02));
  const auto& h = cal.history();
  REQUIRE(h.size() == 10);
  CHECK(h.front().predicted_ns < truth_ns * 9 / 10);  // the preset: more than 10% short
  // Each stage's rank at the pace the factors predict, but for what the
  // prior still holds back (well under 0.5%): no stretch.
  CHECK(cal.rank_stretch() == doctest::Approx(1.0).epsilon(0.005));
}

TEST_CASE("executor cost model: a rank 1.25x slower than its stage stretches the prediction") {
  Setup s = setup(1, 2);
  const core::ParallelPlan& plan = s.scenario.plan;
  const core::WorkProfile truth_work = s.truth.work(s.truth.device, plan);
  const core::IterationEstimate e = s.truth.estimate(plan);
  // The job waits for the slow replica: its compute on the critical path
  // (forward, backward, recompute, bubble) 1.25x, the rest as estimated.
  const core::TimeNs compute = e.forward_ns + e.backward_ns + e.recompute_ns + e.bubble_ns;
  const core::TimeNs observed_ns = e.total_ns + compute / 4;
  core::CostCalibration cal(s.preset, 0.9, 0.5);
  for (int k = 0; k < 10; ++k) {
    core::StepReport r;
    r.iteration = k;
    const core::TimeNs t = stage_compute_ns(truth_work, s.job, 0);
    r.rank_compute_ns = {t, t + t / 4};
    r.iteration_ns = observed_ns;
    cal.observe(r, s.job);
  }
  // Ranks relative to their stage's (lower) median: {1, 1.25}; the spread
  // floor is 3 x 1.4826 x the lower median of {0, 0.25} = 0: stretch 1.25.
  CHECK(cal.rank_stretch() == doctest::Approx(1.25).epsilon(0.01));
  // The GEMM factor is fitted to the stage's median rank, the healthy one.
  CHECK(cal.factor(core::CostFactor::Gemm) == doctest::Approx(2.0).epsilon(0.03));
  CHECK(static_cast<double>(cal.predict_observed_ns(plan)) ==
        doctest::Approx(static_cast<double>(observed_ns)).epsilon(0.03));
  // Plans are compared on healthy ranks: predict_ns has no stretch.
  CHECK(cal.predict_ns(plan) < cal.predict_observed_ns(plan) * 9 / 10);
}

TEST_CASE(
    "executor cost model: one stage's rank 2x slow in a pp4 plan is a slow GPU, not the model") {
  // pp4 x dp1: each stage's median is its only rank, so rank 1 at 2x is
  // stage 1's figure. Its ratio to the model is 2x the others' (the three
  // healthy stages agree), over the stages' lower median by 5% and by 3
  // scaled MADs (0 here): its row is left out of the fit. The GEMM factor is
  // then the healthy stages' 2 (within the prior's pull, 3%), where fitting
  // all four rows would have dragged it towards 2 x (3 + 2) / 4 = 2.5; and
  // rank 1 is named slow at about 2x.
  Setup s = setup(4, 1);
  const core::ParallelPlan& plan = s.scenario.plan;
  REQUIRE(plan.pp == 4);
  const core::WorkProfile truth_work = s.truth.work(s.truth.device, plan);
  core::CostCalibration cal(s.preset, 0.9, 0.5);
  for (int k = 0; k < 10; ++k) {
    core::StepReport r;
    r.iteration = k;
    for (int stage = 0; stage < plan.pp; ++stage)
      r.rank_compute_ns.push_back((stage == 1 ? 2 : 1) *
                                  stage_compute_ns(truth_work, s.job, stage));
    r.iteration_ns = s.truth.estimate(plan).total_ns;
    cal.observe(r, s.job);
  }
  CHECK(cal.factor(core::CostFactor::Gemm) == doctest::Approx(2.0).epsilon(0.03));
  REQUIRE(cal.slow_ranks().size() == 1);
  CHECK(cal.slow_ranks()[0].gpu == 1);
  CHECK(cal.slow_ranks()[0].factor == doctest::Approx(2.0).epsilon(0.05));
}

TEST_CASE("executor cost model: a profile without the executor's kernels is one clear error") {
  const core::Scenario scenario = core::load_scenario(kScenario);
  hw::CalibrationProfile p = truth_profile();
  p.kernels.clear();  // calibrated without --scenario
  CHECK_THROWS_WITH_AS(hw::executor_cost_inputs(scenario, p, hw::OptimizerKind::Adam),
                       doctest::Contains("calibrate with --scenario"), core::InputError);
}
