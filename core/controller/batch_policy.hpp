// The `batch` policy module: sets the global batch for the best goodput
// (Pollux, Qiao et al. OSDI 2021) from the gradient noise scale it measures
// (McCandlish et al. 2018), within the user's bounds and only in steps the
// plan can take (a multiple of dp x micro-batch).
//
// Each iteration it adds the step's gradient norms (StepReport::gradients:
// each replica's squared norm and the reduced one's) to a noise-scale
// estimator (core/convergence/noise_scale.hpp). Every `every` iterations it
// prices each candidate batch B with the calibrated cost model (the presets
// without `calibrate`): goodput(B) = B / ((B + B_noise) T(B)), the progress
// per second. It re-plans to the best when that beats the running batch by
// `min_improvement` in `patience` evaluations in a row. The direction comes
// from the measurement: as the noise scale grows (the loss falls), the best
// batch grows, roughly as sqrt(B_noise) when T(B) is a fixed cost plus a
// per-sequence one.
#pragma once

#include <optional>

#include "core/controller/policy_module.hpp"
#include "core/convergence/noise_scale.hpp"

namespace parashift::core {

struct BatchPolicyOptions {
  int min_batch = 0;              // sequences; 0: one micro-batch per replica
  int max_batch = 0;              // sequences; 0: 8 x the batch the job started with
  int every = 20;                 // iterations between decisions
  double min_improvement = 0.03;  // goodput share the new batch must add
  int patience = 2;               // evaluations in a row the same batch must win
  double smoothing = 0.95;        // the noise estimate's weight of the past per iteration
};

/// One candidate and its predicted goodput (progress per second).
struct BatchChoice {
  int global_batch = 0;
  double iteration_s = 0;
  double goodput = 0;
};

/// The batches the plan can take within [min_batch, max_batch] (multiples of
/// dp x micro_batch, about 12% apart, the running one included) that are
/// valid and fit in memory, priced at `noise_scale` (sequences); best first.
std::vector<BatchChoice> rank_batches(const JobModel& job, int min_batch, int max_batch,
                                      double noise_scale, const CostCalibration* calibration);

class BatchPolicy : public PolicyModule {
 public:
  explicit BatchPolicy(BatchPolicyOptions options)
      : options_(options), estimator_(options.smoothing) {}
  void run(PolicyContext& context) override;
  const NoiseScaleEstimator& estimator() const { return estimator_; }

 private:
  BatchPolicyOptions options_;
  NoiseScaleEstimator estimator_;
  int started_batch_ = 0;  // the job's batch when the module first ran
  int streak_batch_ = 0;
  int streak_ = 0;
};

}  // namespace parashift::core
