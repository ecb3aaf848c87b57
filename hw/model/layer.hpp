// One transformer layer of the synthetic model, tensor-parallel as in
// Megatron-LM: QKV and the first MLP matrix split by columns, the attention
// projection and the second MLP matrix by rows, so the forward pass ends
// each half with one all-reduce (and the backward pass the column-parallel
// input gradients). Attention is causal softmax(Q K^T / sqrt(d)) V per head.
// No norms, no bias, GELU (tanh form) MLP; fp32 on the CPU.
#pragma once

#include <array>
#include <cstdint>
#include <functional>

#include <Eigen/Dense>

#include "hw/model/synthetic_values.hpp"

namespace parashift::hw {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// The shape of one layer on one tensor-parallel rank for one micro-batch.
struct LayerShape {
  int hidden = 0;
  int heads = 0;  // whole model
  int ffn_hidden = 0;
  int tp = 1;
  int seq_len = 0;
  int sequences = 1;  // per micro-batch
  /// Megatron's sequence parallelism: the activations between the GEMM
  /// blocks (layer input, residual, output) hold tokens() / tp rows on
  /// each rank (the device layer only; layer.cpp runs without it).
  bool sequence_parallel = false;
  int head_dim() const { return hidden / heads; }
  int heads_local() const { return heads / tp; }
  int hidden_local() const { return hidden / tp; }  // attention width on this rank
  int ffn_local() const { return ffn_hidden / tp; }
  int tokens() const { return seq_len * sequences; }
  int tokens_local() const { return sequence_parallel ? tokens() / tp : tokens(); }
};

/// This rank's shards of the four weight matrices (gradients and optimizer
/// moments use the same type).
struct LayerTensors {
  Matrix wqkv;  // hidden x 3*hidden_local: [Q heads | K heads | V heads] of this rank
  Matrix wo;    // hidden_local x hidden
  Matrix w1;    // hidden x ffn_local
  Matrix w2;    // ffn_local x hidden
  std::array<Matrix*, 4> all() { return {&wqkv, &wo, &w1, &w2}; }
  std::array<const Matrix*, 4> all() const { return {&wqkv, &wo, &w1, &w2}; }
  std::size_t elements() const;
};

/// Zeros of this rank's shard shapes.
LayerTensors zero_layer(const LayerShape& shape);
/// Elements of this rank's shards of the four matrices (what
/// zero_layer(shape).elements() counts, without making them):
/// hidden x (3 + 1) hidden_local + 2 x hidden x ffn_local.
std::size_t layer_parameters(const LayerShape& shape);
/// The four matrices' element counts, in LayerTensors::all() order.
std::array<std::size_t, 4> layer_tensor_sizes(const LayerShape& shape);
/// Global layer `layer`'s weights, this tensor-parallel rank's slice: the
/// same global tensor whatever the plan (synthetic_values.hpp).
LayerTensors init_layer(const LayerShape& shape, std::uint64_t seed, int layer, int tp_rank);
/// The same four shards as fill specs (wqkv, wo, w1, w2), for filling them
/// where they live (the device layer fills device memory with them).
std::array<SyntheticFill, 4> layer_fills(const LayerShape& shape, std::uint64_t seed, int layer,
                                         int tp_rank);

/// Where element `local` (row-major) of tensor-parallel rank `tp_rank`'s
/// shard of tensor `tensor` (LayerTensors::all() order: wqkv, wo, w1, w2)
/// sits in the whole tensor (tp 1, row-major): the split init_layer makes,
/// which a re-plan undoes and redoes for another tp.
std::size_t tp_whole_index(const LayerShape& shape, int tensor, int tp_rank, std::size_t local);

/// What forward keeps for backward.
struct LayerStash {
  Matrix x, qkv, probs, ctx, x1, u, act;
  std::size_t bytes() const;
};

/// In-place sum over the tensor-parallel group.
using TpReduce = std::function<void(Matrix&)>;

/// y = x + attn(x); out = y + mlp(y). `x` is tokens x hidden.
Matrix layer_forward(const LayerTensors& w, const LayerShape& shape, const Matrix& x,
                     LayerStash& stash, const TpReduce& tp_reduce);
/// Returns d loss / d x; adds the weight gradients into `grads`.
Matrix layer_backward(const LayerTensors& w, const LayerShape& shape, const LayerStash& stash,
                      const Matrix& dy, LayerTensors& grads, const TpReduce& tp_reduce);

/// FLOPs of one forward pass of one layer on one rank (GEMMs and attention
/// core); backward is twice this.
double layer_forward_flops(const LayerShape& shape);

}  // namespace parashift::hw
