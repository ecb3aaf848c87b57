#include "core/cost/work_profile.hpp"

#include <algorithm>

#include "core/cost/compute_model.hpp"

namespace parashift::core {

namespace {

constexpr double kActivationBytes = 2.0;  // BF16 activations
// Element-wise HBM traffic of one layer's forward per token, in units of h
// bytes (BF16): two norms (read h, write h: 4h each) and two fused
// bias-dropout-residual adds (read 2h, write h, 1-byte mask: 7h each).
constexpr double kElementwiseBytesPerHidden = 22.0;
// Backward of those kernels reads the saved inputs and the incoming
// gradient and writes the outgoing one: about twice the forward traffic.
constexpr double kBackwardTrafficFactor = 2.0;
// Flash-attention backward runs five s x s GEMMs to the forward's two.
constexpr double kFlashBackwardFactor = 2.5;
// Unfused attention: the softmax (read + write 2 B) and dropout (read 2 B,
// write 2 B + 1 B mask) pass over every score: 9 B forward, 11 B backward.
constexpr double kScoreBytesForward = 9.0;
constexpr double kScoreBytesBackward = 11.0;
// Mixed-precision Adam per parameter: read FP32 master weight, momentum,
// variance and main gradient (16 B), write weight, momentum, variance
// (12 B) and the BF16 copy (2 B), plus the gradient-norm read (4 B).
constexpr double kAdamBytesPerParam = 34.0;
// Vocab-parallel cross entropy over the logits: FP32 up-cast, max, exp-sum
// and the loss (~8 B per logit) forward, the softmax gradient (~8 B) backward.
constexpr double kLossBytesPerLogit = 8.0;

CollectiveCall call(CollectiveKind kind, double bytes, double count) {
  CollectiveCall c;
  c.kind = kind;
  c.bytes = count > 0 ? bytes : 0.0;
  c.count = count;
  return c;
}

double ffn_activation_bytes_per_token(const ModelSpec& model) {
  const double f = model.ffn_hidden;
  // GELU / squared ReLU read f and write f; SwiGLU reads gate and up (2f), writes f.
  return model.ffn_kind == FfnKind::SwiGlu ? 6.0 * f : 4.0 * f;
}

}  // namespace

const char* to_string(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::AllReduce:
      return "all_reduce";
    case CollectiveKind::ReduceScatter:
      return "reduce_scatter";
    case CollectiveKind::AllGather:
      return "all_gather";
    case CollectiveKind::AllToAll:
      return "all_to_all";
    case CollectiveKind::SendRecv:
      return "send_recv";
  }
  return "?";
}

WorkProfile work_profile(const ModelSpec& model, const DeviceSpec& device, const ParallelPlan& plan,
                         int seq_len) {
  return work_profile(model, device, plan, seq_len, CostOptions{});
}

WorkProfile work_profile(const ModelSpec& model, const DeviceSpec& device, const ParallelPlan& plan,
                         int seq_len, const CostOptions& options) {
  const ComputeRates rates = compute_rates(device);
  const double t = plan.tp;
  const double c = plan.cp;
  const double s = seq_len;
  const double h = model.hidden;
  const double d = model.head_dim();
  const double f = model.ffn_hidden;
  const double v = model.vocab;
  const double tokens = plan.micro_batch * s / c;  // per GPU per micro-batch
  const double heads_per_rank = model.heads / t;
  // With fewer KV heads than TP ranks each rank keeps a replica of one.
  const double kv_heads_per_rank = std::max(1.0, model.kv_heads / t);
  const double ffn_up = (model.ffn_kind == FfnKind::SwiGlu ? 2.0 : 1.0) * f / t;
  const Precision prec = plan.precision;

  // The four GEMMs of a layer: QKV, attention output, MLP up (+gate), down.
  const double qkv_n = (heads_per_rank + 2.0 * kv_heads_per_rank) * d;
  const double gemm_fwd_s =
      gemm_s(rates, tokens, qkv_n, h, prec) + gemm_s(rates, tokens, h, heads_per_rank * d, prec) +
      gemm_s(rates, tokens, ffn_up, h, prec) + gemm_s(rates, tokens, h, f / t, prec);
  const double gemm_flops = 2.0 * tokens * h * (qkv_n + heads_per_rank * d + ffn_up + f / t);

  // Attention core. Each rank holds s/c queries of its heads against all s keys.
  const double score_elems = plan.micro_batch * heads_per_rank * (s / c) * s;
  double attn_fwd_s = 0;
  double attn_bwd_s = 0;
  double attn_flops = 0;
  if (model.attention == AttentionKernel::Fused) {
    attn_flops = 2.0 * 2.0 * score_elems * d * 0.5;  // QK^T and PV, causal half
    attn_fwd_s = attn_flops / rates.attention_flops_per_s;
    attn_bwd_s = kFlashBackwardFactor * attn_fwd_s;
  } else {
    attn_flops = 2.0 * 2.0 * score_elems * d;  // the full s x s is computed
    const double batched_gemm_s =
        attn_flops /
        (rates.gemm_flops_per_s * gemm_shape_efficiency(s, s / c, d, rates.gemm_half_dim));
    attn_fwd_s = batched_gemm_s + memory_s(rates, kScoreBytesForward * score_elems);
    attn_bwd_s = 2.0 * batched_gemm_s + memory_s(rates, kScoreBytesBackward * score_elems);
  }

  // Element-wise work: h-sized parts are split by TP only with sequence parallelism.
  const double h_share = plan.sequence_parallel ? 1.0 / t : 1.0;
  const double elementwise_bytes = tokens * (kElementwiseBytesPerHidden * h * h_share +
                                             ffn_activation_bytes_per_token(model) / t);
  const double elementwise_fwd_s = memory_s(rates, elementwise_bytes * options.elementwise_traffic);
  const double elementwise_bwd_s = kBackwardTrafficFactor * elementwise_fwd_s;

  WorkProfile p;
  p.seq_len = seq_len;
  LayerWork& layer = p.layer;
  const double forward_s = gemm_fwd_s + attn_fwd_s + elementwise_fwd_s;
  // Backward: input-gradient and weight-gradient GEMMs (same shapes, 2x).
  const double backward_input_s = gemm_fwd_s + attn_bwd_s + elementwise_bwd_s;
  layer.forward_ns = seconds_to_ns(forward_s);
  layer.backward_ns = seconds_to_ns(backward_input_s + gemm_fwd_s);
  layer.backward_input_ns = seconds_to_ns(backward_input_s);
  layer.gemm_forward_ns = seconds_to_ns(gemm_fwd_s);
  layer.attention_forward_ns = seconds_to_ns(attn_fwd_s);
  layer.attention_backward_ns = seconds_to_ns(attn_bwd_s);
  layer.elementwise_forward_ns = seconds_to_ns(elementwise_fwd_s);
  layer.forward_flops =
      gemm_flops + attn_flops * (model.attention == AttentionKernel::Fused ? 1.0 : 0.5);

  double recompute_s = 0;
  switch (plan.recompute) {
    case Recompute::None:
      break;
    case Recompute::Selective:
      recompute_s = options.selective == SelectiveRecompute::AttentionCore
                        ? attn_fwd_s
                        : elementwise_fwd_s + 0.5 * gemm_fwd_s;
      break;
    case Recompute::Full:
      recompute_s = forward_s * plan.full_recompute_share(model.layers);
      break;
  }
  layer.recompute_ns = seconds_to_ns(recompute_s);

  // Tensor parallelism: two collectives per layer each way on b*s/c*h activations.
  const double act_bytes = tokens * h * kActivationBytes;
  const int tp_calls = plan.tp > 1 ? 2 : 0;
  const double tp_recompute_calls = tp_calls * plan.full_recompute_share(model.layers);
  if (plan.sequence_parallel) {
    layer.tp_forward = call(CollectiveKind::AllGather, act_bytes, tp_calls);
    layer.tp_forward_scatter = call(CollectiveKind::ReduceScatter, act_bytes, tp_calls);
    layer.tp_backward = call(CollectiveKind::AllGather, act_bytes, tp_calls + tp_recompute_calls);
    layer.tp_backward_scatter =
        call(CollectiveKind::ReduceScatter, act_bytes, tp_calls + tp_recompute_calls);
  } else {
    layer.tp_forward = call(CollectiveKind::AllReduce, act_bytes, tp_calls);
    layer.tp_forward_scatter = call(CollectiveKind::ReduceScatter, 0, 0);
    layer.tp_backward = call(CollectiveKind::AllReduce, act_bytes, tp_calls + tp_recompute_calls);
    layer.tp_backward_scatter = call(CollectiveKind::ReduceScatter, 0, 0);
  }

  // Context parallelism: a ring of c-1 steps passing this rank's K and V
  // chunk (GQA: kv heads only); backward passes K, V and dK, dV.
  const int cp_steps = plan.cp - 1;
  const double kv_chunk_bytes = 2.0 * tokens * kv_heads_per_rank * d * kActivationBytes;
  layer.cp_forward = call(CollectiveKind::SendRecv, kv_chunk_bytes, cp_steps);
  layer.cp_backward = call(CollectiveKind::SendRecv, 2.0 * kv_chunk_bytes, cp_steps);

  // Embedding look-up (gather + position add + dropout, memory-bound) and
  // its scatter-add backward.
  const double embed_bytes = 3.0 * tokens * h * kActivationBytes * h_share;
  p.embedding_forward_ns = seconds_to_ns(memory_s(rates, embed_bytes));
  p.embedding_backward_ns = seconds_to_ns(memory_s(rates, 2.0 * embed_bytes));
  // Output head (kept in BF16 under FP8 recipes) and vocab-parallel loss.
  const double head_gemm_s = gemm_s(rates, tokens, v / t, h, Precision::Bf16);
  const double loss_s = memory_s(rates, kLossBytesPerLogit * tokens * v / t);
  const double final_norm_s = memory_s(rates, 4.0 * tokens * h * h_share);
  p.head_forward_ns = seconds_to_ns(head_gemm_s + loss_s + final_norm_s);
  p.head_backward_ns = seconds_to_ns(2.0 * head_gemm_s + loss_s + 2.0 * final_norm_s);
  p.head_forward_flops = 2.0 * tokens * v / t * h;

  // Pipeline sends carry one micro-batch's activations; each TP rank sends
  // its 1/t share (sequence parallel, or Megatron's scatter-gather).
  p.pp_activation_bytes = act_bytes / t;
  p.params_per_gpu_layer = model.layer_params() / t;
  p.params_per_gpu_embedding = v * h / t;
  p.grad_bytes_per_param = options.grad_reduce_bytes;
  p.optimizer_s_per_param = memory_s(rates, kAdamBytesPerParam);
  return p;
}

double model_flops_per_iteration(const ModelSpec& model, const ParallelPlan& plan, int seq_len) {
  // Per token and layer, forward: 2 FLOPs per GEMM weight plus 4*s*h for
  // the attention scores and context (Megatron counts them non-causal);
  // the logits add 2*V*h. Backward is twice the forward.
  const double s = seq_len;
  const double h = model.hidden;
  const double gemm_weights = model.layer_params() - 2.0 * h;  // minus the norms
  const double per_token_forward =
      model.layers * (2.0 * gemm_weights + 4.0 * s * h) + 2.0 * model.vocab * h;
  return 3.0 * per_token_forward * s * plan.global_batch;
}

}  // namespace parashift::core
