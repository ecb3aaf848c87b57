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

/// A layer's activation memory without parallelism, in units of
/// seq*micro_batch*hidden bytes: the terms tensor parallelism splits only
/// with sequence parallelism, and those it always splits (the attention
/// scores come on top, by ModelSpec::attention).
struct ActivationTerms {
  double unsplit_per_sbh = 0;
  double split_per_sbh = 0;
};
ActivationTerms activation_terms(const ModelSpec& model);

/// Bytes per parameter a GPU keeps for the whole iteration (weights,
/// gradients, optimizer states) under the plan's sharding, excluding
/// FSDP's per-layer gathered working set (peak_memory() adds that).
double resident_bytes_per_param(const ParallelPlan& plan);

/// Activation bytes of one layer for one micro-batch on one GPU.
double layer_activation_bytes(const ModelSpec& model, const ParallelPlan& plan, int seq_len);

/// Micro-batches whose activations stage 0 holds at the peak of the schedule.
double in_flight_micro_batches(const ParallelPlan& plan);

}  // namespace parashift::core
