// Peak memory per GPU: weights, gradients and optimizer states under the
// plan's sharding (ZeRO paper, Rajbhandari et al. 2020), and activations
// under its recompute mode and sequence parallelism (Korthikanti et al. 2022).
#pragma once

#include "core/model_spec.hpp"
#include "core/parallel_plan.hpp"

namespace parashift::core {

struct MemoryEstimate {
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;  // all micro-batches in flight on the busiest stage
  double total_bytes() const {
    return weights_bytes + gradients_bytes + optimizer_bytes + activations_bytes;
  }
};

/// Memory of the most loaded GPU (the first pipeline stage: it holds the
/// embedding and the most in-flight micro-batches).
MemoryEstimate peak_memory(const ModelSpec& model, const ParallelPlan& plan, int seq_len);

/// Activation bytes of one layer for one micro-batch on one GPU.
double layer_activation_bytes(const ModelSpec& model, const ParallelPlan& plan, int seq_len);

/// Micro-batches whose activations stage 0 holds at the peak of the schedule.
double in_flight_micro_batches(const ParallelPlan& plan);

}  // namespace parashift::core
