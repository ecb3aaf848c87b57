// The per-micro-batch work of one plan on one device: compute time of each
// piece on one GPU, and the bytes each collective moves. Both the analytical
// estimate (core/cost/estimate.hpp) and the simulator's lowering
// (sim/lowering) are built from this one profile, so they agree wherever the
// network adds no contention.
#pragma once

#include "core/cost/cost_options.hpp"
#include "core/device_spec.hpp"
#include "core/model_spec.hpp"
#include "core/parallel_plan.hpp"
#include "core/units.hpp"

namespace parashift::core {

/// One collective kind, as a tensor-parallel / context-parallel group runs it.
enum class CollectiveKind { AllReduce, ReduceScatter, AllGather, AllToAll, SendRecv };
const char* to_string(CollectiveKind kind);

/// A collective issued `count` times, each over `bytes` (the full buffer
/// size per rank, as nccl-tests counts it).
struct CollectiveCall {
  CollectiveKind kind = CollectiveKind::AllReduce;
  double bytes = 0;
  double count = 0;  // calls per layer: a mean where only some layers recompute
};

/// Work of one transformer layer for one micro-batch on one GPU.
struct LayerWork {
  TimeNs forward_ns = 0;         // compute only
  TimeNs backward_ns = 0;        // input + weight gradients, compute only
  TimeNs backward_input_ns = 0;  // input-gradient share of backward_ns (for zero-bubble)
  TimeNs recompute_ns = 0;       // extra forward work under the plan's recompute mode
  double forward_flops = 0;      // model FLOPs on this GPU (no recompute)
  /// Tensor-parallel collectives in the forward pass: all-reduces without
  /// sequence parallelism; with it the all-gathers, and the matching
  /// reduce-scatters are in tp_forward_scatter (count 0 without SP).
  CollectiveCall tp_forward;
  CollectiveCall tp_forward_scatter;
  /// ... in the backward pass, including a full recompute's forward ones.
  CollectiveCall tp_backward;
  CollectiveCall tp_backward_scatter;
  CollectiveCall cp_forward;   // context-parallel KV exchange (ring send/recv steps)
  CollectiveCall cp_backward;  // ... K,V and their gradients
  // Breakdown used for overlap decisions (all included in the times above).
  TimeNs gemm_forward_ns = 0;       // the layer's four GEMMs, forward
  TimeNs attention_forward_ns = 0;  // attention core (scores, softmax, context)
  TimeNs attention_backward_ns = 0;
  TimeNs elementwise_forward_ns = 0;  // norms, activation, residual, dropout
};

struct WorkProfile {
  int seq_len = 0;
  LayerWork layer;
  TimeNs embedding_forward_ns = 0;  // first pipeline stage
  TimeNs embedding_backward_ns = 0;
  TimeNs head_forward_ns = 0;  // last stage: output projection + loss
  TimeNs head_backward_ns = 0;
  double head_forward_flops = 0;
  double pp_activation_bytes = 0;   // sent between consecutive stages per micro-batch
  double params_per_gpu_layer = 0;  // parameters of one layer held by one GPU (after tp)
  double params_per_gpu_embedding = 0;
  double grad_bytes_per_param = 2;   // bytes of gradient reduced per parameter
  double optimizer_s_per_param = 0;  // optimizer step seconds per parameter updated on a GPU
};

/// Builds the profile. `seq_len` is the training sequence length. Uses the
/// default CostOptions (flash attention, Megatron's selective recompute).
WorkProfile work_profile(const ModelSpec& model, const DeviceSpec& device, const ParallelPlan& plan,
                         int seq_len);
WorkProfile work_profile(const ModelSpec& model, const DeviceSpec& device, const ParallelPlan& plan,
                         int seq_len, const CostOptions& options);

/// Model FLOPs of one iteration (forward + backward, no recompute), the
/// numerator of MFU: 6 x params x tokens plus attention, per Megatron's
/// accounting (Narayanan et al. 2021, without the recompute term).
double model_flops_per_iteration(const ModelSpec& model, const ParallelPlan& plan, int seq_len);

}  // namespace parashift::core
