// The synthetic transformer layer of hw/model/layer.hpp on a device's
// kernels (device_kernels.hpp): the same math, the same tensor-parallel
// split and all-reduce points, with weights, gradients, optimizer moments
// and the forward stash in device memory. Attention runs as GEMMs batched
// over the rank's heads (one call per sequence), softmax as one kernel over
// every head's score block. With HostKernels it equals layer.cpp to float
// rounding (tests/hw/device_layer_test.cpp); with CudaKernels it is the
// CUDA flavour's layer.
#pragma once

#include <array>
#include <functional>
#include <optional>

#include "core/parallel_plan.hpp"
#include "hw/device/device_kernels.hpp"
#include "hw/model/layer.hpp"
#include "hw/model/optimizer.hpp"

namespace parashift::hw {

struct DeviceLayerTensors {
  DeviceBuffer wqkv, wo, w1, w2;  // shapes as LayerTensors
  std::array<DeviceBuffer*, 4> all() { return {&wqkv, &wo, &w1, &w2}; }
  std::array<const DeviceBuffer*, 4> all() const { return {&wqkv, &wo, &w1, &w2}; }
};

DeviceLayerTensors upload_layer(DeviceKernels& kernels, const LayerTensors& host);
/// Zeros of `shape`'s shard shapes.
DeviceLayerTensors zero_device_layer(DeviceKernels& kernels, const LayerShape& shape);
/// init_layer (hw/model/layer.hpp) made where the weights live: the same
/// bits, without a host copy of the layer.
DeviceLayerTensors init_device_layer(DeviceKernels& kernels, const LayerShape& shape,
                                     std::uint64_t seed, int layer, int tp_rank);
LayerTensors download_layer(DeviceKernels& kernels, const DeviceLayerTensors& device,
                            const LayerShape& shape);

/// What forward keeps for backward (LayerStash on the device); sized once
/// for `shape` and reused by every micro-batch that passes through. Under
/// activation recompute it keeps less, and backward recomputes the rest
/// into the workspace first: selective keeps all but the attention
/// probabilities (the seq x seq blocks per head; backward recomputes the
/// scores and softmax from qkv, Megatron's attention-core recompute); full
/// keeps the layer input only (backward reruns the layer's forward, its
/// tensor-parallel all-reduces included).
struct DeviceStash {
  DeviceStash(DeviceKernels& kernels, const LayerShape& shape,
              core::Recompute recompute = core::Recompute::None);
  core::Recompute recompute = core::Recompute::None;
  DeviceBuffer x, qkv, probs, ctx, x1, u, act;  // empty where recomputed
  std::size_t bytes() const;
};

/// The gradients at the outputs of the layer's four weight GEMMs: what the
/// weight-gradient pass needs besides the stash's inputs. ZB-H1 keeps them
/// from a micro-batch's input-gradient pass (B) to its weight pass (W).
struct DeviceOutputGrads {
  DeviceOutputGrads(DeviceKernels& kernels, const LayerShape& shape);
  DeviceBuffer dy;    // tokens x hidden: at the MLP's output (W2)
  DeviceBuffer du;    // tokens x ffn_local: at W1's output
  DeviceBuffer dx1;   // tokens x hidden: at the attention's output (Wo)
  DeviceBuffer dqkv;  // tokens x 3 hidden_local: at Wqkv's output
  // Sequence parallelism: the stash's token shards of x and x1 gathered
  // again (tokens x hidden each), as Megatron re-gathers a column-parallel
  // GEMM's input for its weight gradient; empty otherwise.
  DeviceBuffer x_full, x1_full;
  std::size_t bytes() const;
};

/// Scratch for one layer's forward and backward of `shape`, shared by all
/// the layers of a rank (they run one after another on the device).
struct DeviceWorkspace {
  /// `recompute`: the mode of the stashes it serves (scratch for the rest).
  DeviceWorkspace(DeviceKernels& kernels, const LayerShape& shape,
                  core::Recompute recompute = core::Recompute::None);
  DeviceBuffer a, b;        // tokens x hidden: attention / MLP outputs, then dx_attn
  DeviceBuffer dact;        // tokens x ffn_local
  DeviceBuffer dctx;        // tokens x hidden_local
  DeviceBuffer dprobs;      // like the stash's probs
  DeviceOutputGrads grads;  // the fused backward's output gradients
  // Sequence parallelism (empty otherwise): gathered GEMM inputs (tokens x
  // hidden) and reduce-scattered outputs (tokens_local x hidden).
  DeviceBuffer x_full, x1_full, a_local, b_local, dx1_local;
  /// Under recompute: where the tensors a stash does not keep live from
  /// their forward (or recomputation) to their use, and the recomputed
  /// forward's output (unused). Empty otherwise.
  std::optional<DeviceStash> scratch;
  DeviceBuffer recompute_out;
  std::size_t bytes() const;
};

/// How a layer talks to its tensor-parallel group. Without sequence
/// parallelism `all_reduce` sums each row-parallel GEMM's partial output in
/// place (Megatron's g). With it (Megatron-LM's sequence parallelism,
/// Korthikanti et al. 2022; LayerShape::sequence_parallel) the activations
/// between the GEMM blocks are split by tokens: `all_gather` rebuilds a
/// column-parallel GEMM's full input from the ranks' shards, and
/// `reduce_scatter` sums a row-parallel GEMM's output into this rank's
/// shard. Counts are of this rank's shard.
struct DeviceTpComm {
  std::function<void(float* data, std::size_t elements)> all_reduce;
  std::function<void(const float* local, float* full, std::size_t local_elements)> all_gather;
  std::function<void(const float* full, float* local, std::size_t local_elements)> reduce_scatter;
};

/// out = x + attn(x), then + mlp(.); `x` and `out` are tokens_local x
/// hidden on the device and may be the same buffer.
void device_layer_forward(DeviceKernels& kernels, const DeviceLayerTensors& w,
                          const LayerShape& shape, const float* x, float* out, DeviceStash& stash,
                          DeviceWorkspace& ws, const DeviceTpComm& tp);
/// dx = d loss / d x from dy (both tokens_local x hidden, may be the same buffer);
/// adds the weight gradients into `grads`. The two passes below, in a row.
void device_layer_backward(DeviceKernels& kernels, const DeviceLayerTensors& w,
                           const LayerShape& shape, DeviceStash& stash, const float* dy, float* dx,
                           DeviceLayerTensors& grads, DeviceWorkspace& ws, const DeviceTpComm& tp);
/// The input-gradient pass (ZB-H1's B): what the stash did not keep
/// recomputed into ws.scratch, dx from dy, the tp all-reduces, and the
/// weight GEMMs' output gradients into `out` (no weight gradient yet).
void device_layer_backward_input(DeviceKernels& kernels, const DeviceLayerTensors& w,
                                 const LayerShape& shape, DeviceStash& stash, const float* dy,
                                 float* dx, DeviceOutputGrads& out, DeviceWorkspace& ws,
                                 const DeviceTpComm& tp);
/// The weight-gradient pass (ZB-H1's W): adds the four weight gradients of
/// one micro-batch into `grads`, from its stash and its output gradients.
/// Under full recompute its inputs are in ws.scratch, so it must follow its
/// input-gradient pass directly.
void device_layer_backward_weight(DeviceKernels& kernels, const LayerShape& shape,
                                  DeviceStash& stash, const DeviceOutputGrads& out,
                                  DeviceLayerTensors& grads, DeviceWorkspace& ws);

/// Adam's moments on the device (empty for SGD).
struct DeviceOptimizerState {
  DeviceLayerTensors m, v;
};
/// Zero moments for every element of each weight tensor, or (distributed
/// optimizer) for shard `shard` of `shards` of each (hw/model/dp_shards.hpp).
DeviceOptimizerState zero_device_state(DeviceKernels& kernels, const OptimizerConfig& config,
                                       const LayerShape& shape, int shards = 1, int shard = 0);
/// optimizer_update on `count` consecutive weights: `grad` their gradients,
/// `m` and `v` their Adam moments (unused for SGD); step `step` (1-based).
void device_optimizer_update_range(DeviceKernels& kernels, const OptimizerConfig& config,
                                   long long step, float* weights, const float* grad, float* m,
                                   float* v, std::size_t count);
/// optimizer_update (hw/model/optimizer.hpp) on the device: step `step` (1-based).
void device_optimizer_update(DeviceKernels& kernels, const OptimizerConfig& config, long long step,
                             DeviceLayerTensors& weights, const DeviceLayerTensors& grads,
                             DeviceOptimizerState& state);

}  // namespace parashift::hw
