#include "core/convergence/noise_scale.hpp"

#include "core/assert.hpp"

namespace parashift::core {

double step_progress(double batch, double noise_scale) {
  return batch / (batch + noise_scale);
}

double goodput(double batch, double noise_scale, double step_s) {
  return step_progress(batch, noise_scale) / step_s;
}

NoiseScaleEstimator::NoiseScaleEstimator(double smoothing) : smoothing_(smoothing) {
  PARASHIFT_ASSERT(smoothing >= 0 && smoothing < 1, "smoothing ", smoothing);
}

void NoiseScaleEstimator::add(double replica_sq_norm, double replica_batch, double global_sq_norm,
                              double global_batch) {
  PARASHIFT_ASSERT(global_batch > replica_batch && replica_batch > 0, "batches ", replica_batch,
                   " and ", global_batch);
  // E|g_b|^2 = |G|^2 + tr(Sigma) / b for a batch of b examples, so two
  // batches give both (McCandlish et al. 2018, eqs. A.2-A.3).
  const double b = replica_batch, big = global_batch;
  const double g2 = (big * global_sq_norm - b * replica_sq_norm) / (big - b);
  const double s = (replica_sq_norm - global_sq_norm) / (1.0 / b - 1.0 / big);
  gradient_sq_ = smoothing_ * gradient_sq_ + (1 - smoothing_) * g2;
  trace_ = smoothing_ * trace_ + (1 - smoothing_) * s;
  ++n_;
}

double NoiseScaleEstimator::noise_scale() const {
  if (n_ == 0 || gradient_sq_ <= 0) return 0;
  // Both averages start from 0 with the same weights, so their start-up
  // bias cancels in the ratio.
  return trace_ / gradient_sq_;
}

}  // namespace parashift::core
