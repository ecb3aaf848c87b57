// The gradient norms the CPU executor reports for the batch module
// (HwOptions::gradient_norms, StepReport::gradients): each replica's and the
// reduced gradient's squared norm on the executor's real gradients. Thread
// ranks and host kernels: the same numbers on every machine.
#include <doctest/doctest.h>

#include <vector>

#include "core/convergence/noise_scale.hpp"
#include "tests/hw/group_training.hpp"

using namespace parashift;

namespace {

// The batch module's estimator (its default smoothing, 0.95) over a run's reports.
double noise_scale(const std::vector<core::StepReport>& reports) {
  core::NoiseScaleEstimator estimator(0.95);
  for (const auto& r : reports) {
    REQUIRE(r.gradients);
    const core::GradientNorms& g = *r.gradients;
    estimator.add(g.replica_sq_norm, g.replica_batch, g.global_sq_norm, g.global_batch);
  }
  return estimator.noise_scale();
}

std::vector<core::StepReport> run(int dp, int iterations) {
  core::ParallelPlan plan = test::tiny_plan(1, 1, dp);
  plan.global_batch = 8;
  test::GroupRun r;
  r.iterations = iterations;
  r.job = "norms-dp" + std::to_string(dp);
  r.gradient_norms = true;
  std::vector<core::StepReport> reports;
  test::train_threads(plan, r, &reports);
  return reports;
}

}  // namespace

TEST_CASE(
    "gradient norms on the executor: the noise scale does not depend on how the batch is split") {
  // The same 8 sequences an iteration, from the same initial weights: split
  // over 2 replicas of 4 sequences (what the batch module would see) and over
  // 8 replicas of one sequence each (per-example gradients: tr(Sigma) by its
  // definition, the offline estimate). McCandlish's B_noise = tr(Sigma) / |G|^2
  // is a property of the data and the weights, so the two agree up to the
  // estimator's noise; the bar is 20%.
  const int iterations = 30;
  const auto two = run(2, iterations);
  const auto eight = run(8, iterations);
  REQUIRE(two.size() == iterations);
  REQUIRE(eight.size() == iterations);
  // Iteration 0: the same weights and data, so the same reduced gradient (the
  // mean over all 8 sequences) up to the order of the float sums.
  REQUIRE(two[0].gradients);
  REQUIRE(eight[0].gradients);
  CHECK(two[0].gradients->global_sq_norm ==
        doctest::Approx(eight[0].gradients->global_sq_norm).epsilon(1e-4));
  CHECK(two[0].gradients->replica_batch == 4);
  CHECK(eight[0].gradients->replica_batch == 1);
  CHECK(two[0].gradients->global_batch == 8);
  // Gradient noise: a replica's smaller batch has the larger norm.
  CHECK(two[0].gradients->replica_sq_norm > two[0].gradients->global_sq_norm);
  CHECK(eight[0].gradients->replica_sq_norm > two[0].gradients->replica_sq_norm);
  const double measured = noise_scale(two), offline = noise_scale(eight);
  MESSAGE("noise scale: 2 replicas ", measured, ", per-sequence ", offline);
  REQUIRE(offline > 0);
  CHECK(measured == doctest::Approx(offline).epsilon(0.20));
}

TEST_CASE("gradient norms: not reported unless asked, nor for one replica") {
  core::ParallelPlan plan = test::tiny_plan(1, 1, 2);
  test::GroupRun r;
  r.iterations = 1;
  r.job = "norms-off";
  std::vector<core::StepReport> reports;
  test::train_threads(plan, r, &reports);
  REQUIRE(reports.size() == 1);
  CHECK_FALSE(reports[0].gradients);
  r.gradient_norms = true;
  reports.clear();
  test::train_threads(test::tiny_plan(1, 2, 1), r, &reports);
  REQUIRE(reports.size() == 1);
  CHECK_FALSE(reports[0].gradients);  // dp 1: no replica and reduced pair to compare
}
