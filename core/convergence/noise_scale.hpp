// The gradient noise scale and what it says about the batch size
// (McCandlish, Kaplan, Amodei et al., "An Empirical Model of Large-Batch
// Training", 2018): with noise scale B_noise = tr(Sigma) / |G|^2 (Sigma the
// per-example gradient covariance, G the true gradient), an optimizer step
// at batch B makes B / (B + B_noise) of the progress of a step at an
// infinite batch. So reaching a loss takes S_min (1 + B_noise / B) steps and
// E_min (1 + B / B_noise) examples, and the progress per second at batch B,
// each step taking T(B), is B / ((B + B_noise) T(B)): Pollux's goodput
// (Qiao et al., OSDI 2021), throughput times statistical efficiency.
#pragma once

#include <cstdint>

namespace parashift::core {

/// Progress of one step at batch `batch` (in steps at an infinite batch).
double step_progress(double batch, double noise_scale);

/// Progress per second at `batch` when a step takes `step_s`.
double goodput(double batch, double noise_scale, double step_s);

/// The noise scale from the gradients data-parallel training already has
/// (McCandlish et al., appendix A.1): each replica's squared gradient norm
/// at its batch b (their mean), and the all-reduced gradient's at the
/// global batch B. Unbiased estimates of |G|^2 and tr(Sigma) from the two,
/// each smoothed by an exponential moving average before their ratio (the
/// ratio of two noisy estimates is biased; the averages are not).
class NoiseScaleEstimator {
 public:
  /// `smoothing`: weight of the past per observation, in [0, 1).
  explicit NoiseScaleEstimator(double smoothing);

  /// `replica_sq_norm`: mean over replicas of |g_b|^2 at batch `replica_batch`;
  /// `global_sq_norm`: |g_B|^2 at `global_batch` (> replica_batch).
  void add(double replica_sq_norm, double replica_batch, double global_sq_norm,
           double global_batch);
  /// B_noise = tr(Sigma) / |G|^2 in the batch's unit (sequences); 0 before
  /// any observation or while the |G|^2 estimate is not positive.
  double noise_scale() const;
  std::int64_t observations() const { return n_; }

 private:
  double smoothing_;
  double gradient_sq_ = 0;  // EMA of the |G|^2 estimates
  double trace_ = 0;        // EMA of the tr(Sigma) estimates
  std::int64_t n_ = 0;
};

}  // namespace parashift::core
