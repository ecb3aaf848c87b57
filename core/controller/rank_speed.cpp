// CostCalibration's per-rank speed (cost_calibration.hpp): each rank's time
// over what the fitted factors predict for its stage, and the stretch the
// slowest one puts on the running plan's critical path.
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/controller/cost_calibration.hpp"
#include "core/controller/lower_median.hpp"

namespace parashift::core {

TimeNs CostCalibration::predict_observed_ns(const ParallelPlan& plan) const {
  const IterationEstimate e = preset_.estimate(plan, device(), cluster());
  // Every pass of the critical path runs at the slowest rank's pace.
  const double compute =
      static_cast<double>(e.forward_ns + e.backward_ns + e.recompute_ns + e.bubble_ns);
  return e.total_ns + static_cast<TimeNs>((stretch_ - 1.0) * compute);
}

std::vector<SlowGpu> CostCalibration::slow_ranks() const {
  std::vector<SlowGpu> out;
  // Against the median rank, not the model: ranks all off the model
  // together are the factors' business, and a plan comparison is between
  // ranks of one cluster.
  if (!(speed_mid_ > 0)) return out;
  for (std::size_t r = 0; r < rank_speed_.size(); ++r) {
    const double excess = rank_speed_[r] - speed_mid_ - speed_floor_;
    if (rank_speed_[r] > 0 && excess > 0)
      out.push_back({static_cast<int>(r), 1.0 + excess / speed_mid_});
  }
  return out;
}

TimeNs CostCalibration::predict_balanced_ns(const ParallelPlan& plan) const {
  const IterationEstimate e = preset_.estimate(plan, device(), cluster());
  return with_slow_gpus(e, plan, slow_ranks()).total_ns;
}

void CostCalibration::update_rank_speed(const std::string& plan_label) {
  if (rank_speed_plan_ != plan_label || rank_speed_.size() != rank_ratio_.size()) {
    rank_speed_.assign(rank_ratio_.size(), 0.0);
    rank_speed_plan_ = plan_label;
  }
  // What the fitted factors make of each stage's preset time.
  const Row factors = applied_factors();
  std::vector<double> fitted(stage_model_.size(), 0.0);
  for (std::size_t st = 0; st < stage_model_.size(); ++st) {
    const Expected& e = stage_model_[st];
    const double preset = e.by_class.sum() + e.fixed_ns;
    if (preset > 0) fitted[st] = (e.by_class.dot(factors) + e.fixed_ns) / preset;
  }
  std::vector<double>& speeds = speed_scratch_;
  speeds.clear();
  for (std::size_t r = 0; r < rank_ratio_.size(); ++r) {
    const RankRatio& rr = rank_ratio_[r];
    const double model = fitted[static_cast<std::size_t>(rr.stage)];
    if (!(rr.ratio > 0) || !(model > 0)) continue;
    const double x = rr.ratio / model;
    double& s = rank_speed_[r];
    s = s > 0 ? lambda_ * s + (1 - lambda_) * x : x;
    speeds.push_back(s);
  }
  stretch_ = 1.0;
  if (speeds.empty()) return;
  // The spread jitter alone leaves: 1.4826 x the median absolute deviation,
  // of at most 1,024 ranks evenly strided (a spread, not a rank, is wanted:
  // the controller's budget at 16K GPUs is 1 ms an iteration).
  constexpr std::size_t kSpreadSample = 1024;
  if (speeds.size() > kSpreadSample) {
    const std::size_t n = speeds.size();
    for (std::size_t i = 0; i < kSpreadSample; ++i) speeds[i] = speeds[i * n / kSpreadSample];
    speeds.resize(kSpreadSample);
  }
  const double mid = lower_median(speeds);
  for (double& s : speeds) s = std::abs(s - mid);
  const double floor = 3.0 * 1.4826 * lower_median(speeds);
  speed_floor_ = floor;
  speed_mid_ = mid;
  double busiest = 0, critical = 0;
  for (std::size_t r = 0; r < rank_ratio_.size(); ++r) {
    const RankRatio& x = rank_ratio_[r];
    if (!(rank_speed_[r] > 0)) continue;
    busiest = std::max(busiest, x.even_ns);
    critical = std::max(critical, x.stage_ns * (1.0 + std::max(0.0, rank_speed_[r] - 1.0 - floor)));
  }
  if (busiest > 0) stretch_ = std::max(1.0, critical / busiest);
}

}  // namespace parashift::core
