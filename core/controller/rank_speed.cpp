// CostCalibration's per-rank speed (cost_calibration.hpp): each rank's time
// over what the fitted factors predict for its stage, and the stretch the
// slowest one puts on the running plan's critical path.
#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "core/controller/cost_calibration.hpp"
#include "core/controller/lower_median.hpp"

namespace parashift::core {
namespace {

// The median of `speeds` and the spread jitter alone leaves around it, 3
// robust standard deviations (3 x 1.4826 x the median absolute deviation),
// from at most 1,024 ranks evenly strided (a spread, not a rank, is wanted:
// the controller's budget at 16K GPUs is 1 ms an iteration). Reorders and
// shrinks `speeds`.
std::pair<double, double> jitter_floor(std::vector<double>& speeds) {
  constexpr std::size_t kSpreadSample = 1024;
  if (speeds.size() > kSpreadSample) {
    const std::size_t n = speeds.size();
    for (std::size_t i = 0; i < kSpreadSample; ++i) speeds[i] = speeds[i * n / kSpreadSample];
    speeds.resize(kSpreadSample);
  }
  const double mid = lower_median(speeds);
  for (double& s : speeds) s = std::abs(s - mid);
  return {mid, 3.0 * 1.4826 * lower_median(speeds)};
}

}  // namespace

TimeNs CostCalibration::predict_observed_ns(const ParallelPlan& plan) const {
  const IterationEstimate e = preset_.estimate(plan, device(), cluster());
  if (rank_speed_plan_ != plan.label() && !preset_.device_groups.empty()) {
    // Nothing measured of this plan yet: the device groups as the
    // balance module would run them (exact when the replicas cannot differ).
    return with_gpu_factors(e, plan, plan_group_factors(plan)).total_ns;
  }
  // Each replica runs its share of the micro-batches, each pass at its
  // slowest rank's pace and each with its tensor-, context- and
  // pipeline-parallel transfers; the last replica to finish is the
  // iteration's critical path.
  const double compute =
      static_cast<double>(e.forward_ns + e.backward_ns + e.recompute_ns + e.bubble_ns);
  const double comm = static_cast<double>(e.tp_comm_ns + e.cp_comm_ns + e.pp_comm_ns);
  double latest = compute + comm;
  for (const ReplicaPace& r : replica_pace_)
    latest = std::max(latest, r.stretch * compute + r.share * comm);
  return e.total_ns + static_cast<TimeNs>(latest - compute - comm);
}

TimeNs CostCalibration::predict_balanced_ns(const ParallelPlan& plan) const {
  const IterationEstimate e = preset_.estimate(plan, device(), cluster());
  return with_gpu_factors(e, plan, merge_factors(plan_group_factors(plan), slow_ranks_)).total_ns;
}

std::vector<GpuFactor> CostCalibration::plan_group_factors(const ParallelPlan& plan) const {
  return group_factors(device_groups(), preset_.model, device(), plan, preset_.seq_len,
                       preset_.options);
}

double CostCalibration::rank_stretch() const {
  double stretch = 1.0;
  for (const ReplicaPace& r : replica_pace_) stretch = std::max(stretch, r.stretch);
  return stretch;
}

void CostCalibration::update_rank_speed(const std::string& plan_label) {
  if (rank_speed_plan_ != plan_label || rank_speed_.size() != rank_ratio_.size()) {
    rank_speed_.assign(rank_ratio_.size(), 0.0);
    rank_speed_plan_ = plan_label;
  }
  // What the fitted factors make of each stage's preset time, inverted
  // (the loops below divide by it once per rank).
  const Row factors = applied_factors();
  std::vector<double> fitted(stage_model_.size(), 0.0);  // 1 / (fitted / preset)
  for (std::size_t st = 0; st < stage_model_.size(); ++st) {
    const Expected& e = stage_model_[st];
    const double preset = e.by_class.sum() + e.fixed_ns;
    if (preset > 0) fitted[st] = preset / (e.by_class.dot(factors) + e.fixed_ns);
  }
  // This iteration's speeds (a strided sample of at most 1,024 for the
  // spread jitter gives them), and the busiest stage at the even share.
  std::vector<double>& raw = raw_scratch_;
  raw.assign(rank_ratio_.size(), 0.0);
  std::vector<double>& sample = speed_scratch_;
  sample.clear();
  const std::size_t stride = rank_ratio_.size() / 1024 + 1;
  double busiest = 0;
  std::size_t next = 0;  // the next rank to sample (a counter, not r % stride)
  for (std::size_t r = 0; r < rank_ratio_.size(); ++r) {
    const RankRatio& rr = rank_ratio_[r];
    const double per_model = fitted[static_cast<std::size_t>(rr.stage)];
    if (!(rr.ratio > 0) || !(per_model > 0)) continue;
    raw[r] = rr.ratio * per_model;
    if (r >= next) {
      sample.push_back(raw[r]);
      next = r + stride;
    }
    if (rr.even_ns > busiest) busiest = rr.even_ns;
  }
  const double raw_floor = sample.empty() ? 0.0 : jitter_floor(sample).second;
  // Smoothed by the forgetting; a rank off its smoothed speed by more than
  // twice the jitter floor (and 5%) on the same side two iterations running
  // has changed speed (a step, as the factors' covariance reset): it takes
  // the new speed at once instead of over tens of iterations.
  if (rank_step_.size() != rank_speed_.size()) rank_step_.assign(rank_speed_.size(), 0);
  sample.clear();
  next = 0;
  for (std::size_t r = 0; r < rank_ratio_.size(); ++r) {
    const double x = raw[r];
    if (!(x > 0)) continue;
    double& sp = rank_speed_[r];
    signed char& step = rank_step_[r];
    const double off = sp > 0 ? x - sp : 0.0;
    if (std::abs(off) > std::max(2.0 * raw_floor, 0.05 * sp)) {
      const signed char side = off > 0 ? 1 : -1;
      if (step == side) {
        sp = x;
        step = 0;
      } else {
        step = side;
        sp = lambda_ * sp + (1 - lambda_) * x;
      }
    } else {
      step = 0;
      sp = sp > 0 ? lambda_ * sp + (1 - lambda_) * x : x;
    }
    if (r >= next) {
      sample.push_back(sp);
      next = r + stride;
    }
  }
  replica_pace_.clear();
  slow_ranks_.clear();
  if (sample.empty() || !(busiest > 0)) return;
  const auto [mid, floor] = jitter_floor(sample);
  // Per replica, its slowest rank's compute over the busiest stage's at the
  // even share; and the slow ranks, against the median rank rather than the
  // model (ranks all off the model together are the factors' business, and
  // plans are compared on one cluster's ranks).
  const int dp_stride = std::max(1, dp_stride_);
  const int dp = std::max(1, dp_);
  replica_pace_.assign(static_cast<std::size_t>(dp), ReplicaPace{0, 1});
  for (std::size_t r = 0; r < rank_ratio_.size(); ++r) {
    const auto d = static_cast<std::size_t>(static_cast<int>(r) / dp_stride % dp);
    const RankRatio& x = rank_ratio_[r];
    const double sp = rank_speed_[r];
    if (!(sp > 0) || !(raw[r] > 0)) continue;
    const double t = x.stage_ns * (1.0 + std::max(0.0, sp - 1.0 - floor)) / busiest;
    replica_pace_[d].stretch = std::max(replica_pace_[d].stretch, t);
    replica_pace_[d].share = x.share;
    if (mid > 0 && sp - mid - floor > 0)
      slow_ranks_.push_back({static_cast<int>(r), 1.0 + (sp - mid - floor) / mid});
  }
}

}  // namespace parashift::core
