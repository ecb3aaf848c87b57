#include "hw/model/layer_ops.hpp"

namespace parashift::hw {

const char* to_string(PointwiseKind kind) {
  switch (kind) {
    case PointwiseKind::Gelu:
      return "gelu";
    case PointwiseKind::GeluBackward:
      return "gelu_backward";
    case PointwiseKind::CausalSoftmax:
      return "causal_softmax";
    case PointwiseKind::CausalSoftmaxBackward:
      return "causal_softmax_backward";
  }
  return "?";
}

namespace {

// `reductions` row-parallel outputs summed (all-reduce, or reduce-scatter
// under sequence parallelism, which also gathers `gathers` inputs).
void set_tp_collectives(LayerOps& ops, const LayerShape& s, int reductions, int gathers) {
  if (s.tp == 1) return;
  ops.tp_bytes_each = static_cast<double>(s.tokens()) * s.hidden * sizeof(float);
  if (s.sequence_parallel) {
    ops.tp_reduce_scatters = reductions;
    ops.tp_all_gathers = gathers;
  } else {
    ops.tp_all_reduces = reductions;
  }
}

}  // namespace

// Read off layer_forward (layer.cpp), t = tokens, h = hidden, hl = hidden / tp,
// fl = ffn / tp, d = head_dim, per head and sequence seq x seq attention.
LayerOps layer_forward_ops(const LayerShape& s) {
  const int t = s.tokens(), h = s.hidden, hl = s.hidden_local(), fl = s.ffn_local();
  const int seq = s.seq_len, d = s.head_dim(), heads = s.heads_local() * s.sequences;
  LayerOps ops;
  ops.gemms = {
      {t, 3 * hl, h, false, false, 1},     // qkv = x Wqkv
      {seq, seq, d, false, true, heads},   // scores = q k^T
      {seq, d, seq, false, false, heads},  // ctx = P v
      {t, h, hl, false, false, 1},         // attn = ctx Wo
      {t, fl, h, false, false, 1},         // u = x1 W1
      {t, h, fl, false, false, 1},         // mlp = act W2
  };
  ops.pointwise = {{PointwiseKind::CausalSoftmax, seq, seq, heads},
                   {PointwiseKind::Gelu, t, fl, 1}};
  // Stash copy of x (read + write), x1 = x + attn and out = x1 + mlp (2
  // reads + 1 write each): 2 + 3 + 3 passes over this rank's tokens x h (a
  // shard under sequence parallelism).
  ops.stream_bytes = 8.0 * s.tokens_local() * h * sizeof(float);
  set_tp_collectives(ops, s, 2, 2);
  return ops;
}

// Read off device_layer_backward_input: the input-gradient GEMM of each
// weight and four per head (dP, dV, dQ, dK).
LayerOps layer_backward_input_ops(const LayerShape& s) {
  const int t = s.tokens(), h = s.hidden, hl = s.hidden_local(), fl = s.ffn_local();
  const int seq = s.seq_len, d = s.head_dim(), heads = s.heads_local() * s.sequences;
  LayerOps ops;
  ops.gemms = {
      {t, fl, h, false, true, 1},          // dact = dy W2^T
      {t, h, fl, false, true, 1},          // dx1_mlp = du W1^T
      {t, hl, h, false, true, 1},          // dctx = dx1 Wo^T
      {seq, seq, d, false, true, heads},   // dP = dctx v^T
      {seq, d, seq, true, false, heads},   // dV = P^T dctx
      {seq, d, seq, false, false, heads},  // dQ = dS k
      {seq, d, seq, true, false, heads},   // dK = dS^T q
      {t, h, 3 * hl, false, true, 1},      // dx_attn = dqkv Wqkv^T
  };
  ops.pointwise = {{PointwiseKind::GeluBackward, t, fl, 1},
                   {PointwiseKind::CausalSoftmaxBackward, seq, seq, heads}};
  // dx1 = dy + dx1_mlp and dx1 + dx_attn (2 x 3 passes over this rank's
  // tokens x h), and dy kept for W: copied (2 passes over t x h), or under
  // sequence parallelism gathered, with x and x1 gathered again for W.
  ops.stream_bytes = 6.0 * s.tokens_local() * h * sizeof(float);
  if (!s.sequence_parallel) ops.stream_bytes += 2.0 * t * h * sizeof(float);
  set_tp_collectives(ops, s, 2, 4);
  return ops;
}

// Read off device_layer_backward_weight: each weight's gradient, added in.
LayerOps layer_backward_weight_ops(const LayerShape& s) {
  const int t = s.tokens(), h = s.hidden, hl = s.hidden_local(), fl = s.ffn_local();
  LayerOps ops;
  ops.gemms = {
      {fl, h, t, true, false, 1},      // dW2 += act^T dy
      {h, fl, t, true, false, 1},      // dW1 += x1^T du
      {hl, h, t, true, false, 1},      // dWo += ctx^T dx1
      {h, 3 * hl, t, true, false, 1},  // dWqkv += x^T dqkv
  };
  return ops;
}

LayerOps layer_backward_ops(const LayerShape& s) {
  LayerOps ops = layer_backward_input_ops(s);
  const LayerOps weight = layer_backward_weight_ops(s);
  ops.gemms.insert(ops.gemms.end(), weight.gemms.begin(), weight.gemms.end());
  return ops;
}

LayerOps layer_recompute_ops(const LayerShape& s, core::Recompute recompute) {
  if (recompute == core::Recompute::None) return {};
  if (recompute == core::Recompute::Full) {
    LayerOps ops = layer_forward_ops(s);
    // The stash's copy of x is not made again (2 of the forward's passes).
    ops.stream_bytes -= 2.0 * s.tokens_local() * s.hidden * sizeof(float);
    if (s.sequence_parallel) {
      // Its gathered x and x1 serve the weight pass: copied (2 x 2 passes
      // over tokens x h) instead of the backward's two all-gathers.
      ops.tp_all_gathers = 0;
      ops.stream_bytes += 4.0 * s.tokens() * s.hidden * sizeof(float);
    }
    return ops;
  }
  const int seq = s.seq_len, d = s.head_dim(), heads = s.heads_local() * s.sequences;
  LayerOps ops;
  ops.gemms = {{seq, seq, d, false, true, heads}};  // scores = q k^T
  ops.pointwise = {{PointwiseKind::CausalSoftmax, seq, seq, heads}};
  return ops;
}

double gemm_flops(const LayerOps& ops) {
  double flops = 0;
  for (const GemmOp& g : ops.gemms) flops += g.flops();
  return flops;
}

double recompute_units(const LayerShape& shape, core::Recompute recompute) {
  if (recompute == core::Recompute::None) return 0.0;
  return gemm_flops(layer_recompute_ops(shape, recompute)) / gemm_flops(layer_forward_ops(shape));
}

std::vector<GemmOp> distinct_gemms(const LayerShape& shape) {
  std::vector<GemmOp> out;
  for (const auto& ops : {layer_forward_ops(shape), layer_backward_ops(shape)})
    for (GemmOp g : ops.gemms) {
      g.count = 1;
      bool seen = false;
      for (const auto& o : out) seen = seen || o.same_kernel(g);
      if (!seen) out.push_back(g);
    }
  return out;
}

}  // namespace parashift::hw
