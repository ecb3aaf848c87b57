#include "hw/model/layer.hpp"

#include <cmath>
#include <limits>

#include "hw/model/pointwise.hpp"
#include "hw/model/synthetic_values.hpp"

namespace parashift::hw {

namespace {

enum WeightId : std::uint64_t { kWqkv = 0, kWo = 1, kW1 = 2, kW2 = 3 };

}  // namespace

std::size_t LayerTensors::elements() const {
  std::size_t n = 0;
  for (const Matrix* m : all()) n += static_cast<std::size_t>(m->size());
  return n;
}

std::size_t LayerStash::bytes() const {
  std::size_t n = 0;
  for (const Matrix* m : {&x, &qkv, &probs, &ctx, &x1, &u, &act})
    n += static_cast<std::size_t>(m->size()) * sizeof(float);
  return n;
}

std::size_t layer_parameters(const LayerShape& s) {
  const auto sizes = layer_tensor_sizes(s);
  return sizes[0] + sizes[1] + sizes[2] + sizes[3];
}

std::array<std::size_t, 4> layer_tensor_sizes(const LayerShape& s) {
  const auto h = static_cast<std::size_t>(s.hidden);
  const auto hl = static_cast<std::size_t>(s.hidden_local());
  const auto fl = static_cast<std::size_t>(s.ffn_local());
  return {h * 3 * hl, hl * h, h * fl, fl * h};
}

LayerTensors zero_layer(const LayerShape& s) {
  LayerTensors t;
  t.wqkv = Matrix::Zero(s.hidden, 3 * s.hidden_local());
  t.wo = Matrix::Zero(s.hidden_local(), s.hidden);
  t.w1 = Matrix::Zero(s.hidden, s.ffn_local());
  t.w2 = Matrix::Zero(s.ffn_local(), s.hidden);
  return t;
}

std::array<SyntheticFill, 4> layer_fills(const LayerShape& s, std::uint64_t seed, int layer,
                                         int tp_rank) {
  const auto hl = static_cast<std::uint64_t>(s.hidden_local());
  const auto fl = static_cast<std::uint64_t>(s.ffn_local());
  const auto h = static_cast<std::uint64_t>(s.hidden);
  const auto tpr = static_cast<std::uint64_t>(tp_rank);
  const auto what = [&](WeightId id) { return static_cast<std::uint64_t>(layer) * 8 + id; };
  const auto scale = [](int fan_in) { return 1.0f / std::sqrt(static_cast<float>(fan_in)); };
  std::array<SyntheticFill, 4> f;
  // QKV: local column c is part c / hl (Q, K or V), global column part*h + tp_rank*hl + c % hl.
  f[0] = {s.hidden, 3 * s.hidden_local(), seed, what(kWqkv), 0, hl, h, tpr * hl, scale(s.hidden)};
  // The projection's rows and the second MLP matrix's rows are this rank's slice.
  f[1] = {s.hidden_local(), s.hidden, seed, what(kWo), tpr * hl, h, 0, 0, scale(s.hidden)};
  f[2] = {s.hidden, s.ffn_local(), seed, what(kW1), 0, fl, 0, tpr * fl, scale(s.hidden)};
  f[3] = {s.ffn_local(), s.hidden, seed, what(kW2), tpr * fl, h, 0, 0, scale(s.ffn_hidden)};
  return f;
}

std::size_t tp_whole_index(const LayerShape& s, int tensor, int tp_rank, std::size_t local) {
  const auto h = static_cast<std::size_t>(s.hidden);
  const auto hl = static_cast<std::size_t>(s.hidden_local());
  const auto fl = static_cast<std::size_t>(s.ffn_local());
  const auto r = static_cast<std::size_t>(tp_rank);
  switch (tensor) {
    case 0: {  // hidden x 3 hidden_local: column c is part c / hl's column r hl + c % hl
      const std::size_t row = local / (3 * hl), col = local % (3 * hl);
      return row * 3 * h + (col / hl) * h + r * hl + col % hl;
    }
    case 1:  // hidden_local x hidden: rows r hl.. of the whole
      return r * hl * h + local;
    case 2: {  // hidden x ffn_local: columns r fl..
      const std::size_t row = local / fl, col = local % fl;
      return row * static_cast<std::size_t>(s.ffn_hidden) + r * fl + col;
    }
    default:  // 3, ffn_local x hidden: rows r fl..
      return r * fl * h + local;
  }
}

LayerTensors init_layer(const LayerShape& s, std::uint64_t seed, int layer, int tp_rank) {
  LayerTensors t = zero_layer(s);
  const auto fills = layer_fills(s, seed, layer, tp_rank);
  auto all = t.all();
  for (std::size_t i = 0; i < all.size(); ++i) fill_synthetic(fills[i], all[i]->data());
  return t;
}

Matrix layer_forward(const LayerTensors& w, const LayerShape& s, const Matrix& x, LayerStash& st,
                     const TpReduce& tp_reduce) {
  const int seq = s.seq_len, d = s.head_dim(), hl = s.hidden_local();
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  st.x = x;
  st.qkv.noalias() = x * w.wqkv;
  st.probs.resize(static_cast<Eigen::Index>(s.sequences) * s.heads_local() * seq, seq);
  st.ctx.resize(s.tokens(), hl);
  for (int b = 0; b < s.sequences; ++b) {
    for (int h = 0; h < s.heads_local(); ++h) {
      const auto q = st.qkv.block(b * seq, h * d, seq, d);
      const auto k = st.qkv.block(b * seq, hl + h * d, seq, d);
      const auto v = st.qkv.block(b * seq, 2 * hl + h * d, seq, d);
      auto p = st.probs.block((b * s.heads_local() + h) * seq, 0, seq, seq);
      p.noalias() = (q * k.transpose()) * scale;
      causal_softmax(p);
      st.ctx.block(b * seq, h * d, seq, d).noalias() = p * v;
    }
  }
  Matrix attn = st.ctx * w.wo;
  tp_reduce(attn);
  st.x1 = x + attn;
  st.u.noalias() = st.x1 * w.w1;
  st.act = gelu(st.u);
  Matrix mlp = st.act * w.w2;
  tp_reduce(mlp);
  return st.x1 + mlp;
}

Matrix layer_backward(const LayerTensors& w, const LayerShape& s, const LayerStash& st,
                      const Matrix& dy, LayerTensors& g, const TpReduce& tp_reduce) {
  const int seq = s.seq_len, d = s.head_dim(), hl = s.hidden_local();
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  // MLP: out = x1 + gelu(x1 W1) W2.
  g.w2.noalias() += st.act.transpose() * dy;
  const Matrix dact = dy * w.w2.transpose();
  const Matrix du = gelu_backward(dact, st.u);
  g.w1.noalias() += st.x1.transpose() * du;
  Matrix dx1_mlp = du * w.w1.transpose();
  tp_reduce(dx1_mlp);
  const Matrix dx1 = dy + dx1_mlp;
  // Attention: x1 = x + ctx Wo.
  g.wo.noalias() += st.ctx.transpose() * dx1;
  const Matrix dctx = dx1 * w.wo.transpose();
  Matrix dqkv(s.tokens(), 3 * hl);
  for (int b = 0; b < s.sequences; ++b) {
    for (int h = 0; h < s.heads_local(); ++h) {
      const auto q = st.qkv.block(b * seq, h * d, seq, d);
      const auto k = st.qkv.block(b * seq, hl + h * d, seq, d);
      const auto v = st.qkv.block(b * seq, 2 * hl + h * d, seq, d);
      const auto p = st.probs.block((b * s.heads_local() + h) * seq, 0, seq, seq);
      const auto dc = dctx.block(b * seq, h * d, seq, d);
      const Matrix dp = dc * v.transpose();
      dqkv.block(b * seq, 2 * hl + h * d, seq, d).noalias() = p.transpose() * dc;
      const Matrix ds = causal_softmax_backward(p, dp, scale);
      dqkv.block(b * seq, h * d, seq, d).noalias() = ds * k;
      dqkv.block(b * seq, hl + h * d, seq, d).noalias() = ds.transpose() * q;
    }
  }
  g.wqkv.noalias() += st.x.transpose() * dqkv;
  Matrix dx_attn = dqkv * w.wqkv.transpose();
  tp_reduce(dx_attn);
  return dx1 + dx_attn;
}

double layer_forward_flops(const LayerShape& s) {
  const double t = s.tokens(), h = s.hidden, hl = s.hidden_local(), fl = s.ffn_local();
  const double gemms = 2.0 * t * h * (3.0 * hl + hl + 2.0 * fl);
  const double attention = 2.0 * 2.0 * t * s.seq_len * hl;  // scores and context, unmasked
  return gemms + attention;
}

}  // namespace parashift::hw
