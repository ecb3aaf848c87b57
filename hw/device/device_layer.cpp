#include "hw/device/device_layer.hpp"

#include <cmath>

namespace parashift::hw {

namespace {

std::size_t count(int rows, int cols) {
  return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
}

std::size_t score_elements(const LayerShape& s) {
  return count(s.sequences * s.heads_local(), s.seq_len) * static_cast<std::size_t>(s.seq_len);
}

// C (m x n, ldc) = alpha op(A) op(B) + beta C for one matrix of each.
GemmCall plain(int m, int n, int k, const float* a, int lda, bool a_t, const float* b, int ldb,
               bool b_t, float* c, int ldc, float beta = 0.0f) {
  GemmCall g;
  g.m = m;
  g.n = n;
  g.k = k;
  g.a = a;
  g.lda = lda;
  g.a_transposed = a_t;
  g.b = b;
  g.ldb = ldb;
  g.b_transposed = b_t;
  g.c = c;
  g.ldc = ldc;
  g.beta = beta;
  return g;
}

// Where one operand of a GEMM batched over the rank's heads lies in its
// matrix: head 0's block (offset), its leading dimension, the step to the
// next head's block.
struct HeadView {
  std::size_t offset;
  int ld;
  std::int64_t stride;
  bool transposed = false;
};

// The per-head views of one sequence: head h's block of a tokens x width
// matrix starts h * head_dim columns on (stride head_dim); a score block is
// seq x seq, contiguous (stride seq^2).
struct HeadBatch {
  const LayerShape& s;
  int b;  // sequence
  // Columns `at` onwards of sequence b's rows of a tokens x `width` matrix.
  HeadView columns(int width, int at, bool transposed = false) const {
    return {count(b * s.seq_len, width) + static_cast<std::size_t>(at), width, s.head_dim(),
            transposed};
  }
  // Sequence b's score blocks.
  HeadView scores(bool transposed = false) const {
    return {count(b * s.heads_local(), s.seq_len) * s.seq_len, s.seq_len,
            static_cast<std::int64_t>(s.seq_len) * s.seq_len, transposed};
  }
  // C_h = alpha op(A_h) op(B_h) (m x n, inner k) for every head in one call.
  void gemm(DeviceKernels& kernels, int m, int n, int k, const float* a, HeadView av,
            const float* bm, HeadView bv, float* c, HeadView cv, float alpha = 1.0f) const {
    GemmCall g;
    g.m = m;
    g.n = n;
    g.k = k;
    g.a = a + av.offset;
    g.lda = av.ld;
    g.stride_a = av.stride;
    g.a_transposed = av.transposed;
    g.b = bm + bv.offset;
    g.ldb = bv.ld;
    g.stride_b = bv.stride;
    g.b_transposed = bv.transposed;
    g.c = c + cv.offset;
    g.ldc = cv.ld;
    g.stride_c = cv.stride;
    g.batch = s.heads_local();
    g.alpha = alpha;
    kernels.gemm(g);
  }
};

}  // namespace

DeviceLayerTensors upload_layer(DeviceKernels& k, const LayerTensors& host) {
  DeviceLayerTensors d;
  auto from = host.all();
  auto to = d.all();
  for (std::size_t i = 0; i < from.size(); ++i) {
    const auto n = static_cast<std::size_t>(from[i]->size());
    *to[i] = DeviceBuffer(k, n);
    k.upload(std::span<const float>(from[i]->data(), n), to[i]->data());
  }
  return d;
}

DeviceLayerTensors zero_device_layer(DeviceKernels& k, const LayerShape& s) {
  DeviceLayerTensors d;
  d.wqkv = DeviceBuffer(k, count(s.hidden, 3 * s.hidden_local()));
  d.wo = DeviceBuffer(k, count(s.hidden_local(), s.hidden));
  d.w1 = DeviceBuffer(k, count(s.hidden, s.ffn_local()));
  d.w2 = DeviceBuffer(k, count(s.ffn_local(), s.hidden));
  return d;
}

DeviceLayerTensors init_device_layer(DeviceKernels& k, const LayerShape& s, std::uint64_t seed,
                                     int layer, int tp_rank) {
  DeviceLayerTensors d = zero_device_layer(k, s);
  const auto fills = layer_fills(s, seed, layer, tp_rank);
  auto all = d.all();
  for (std::size_t i = 0; i < all.size(); ++i) k.fill_synthetic(fills[i], all[i]->data());
  return d;
}

LayerTensors download_layer(DeviceKernels& k, const DeviceLayerTensors& d, const LayerShape& s) {
  LayerTensors host = zero_layer(s);
  auto to = host.all();
  auto from = d.all();
  for (std::size_t i = 0; i < to.size(); ++i)
    k.download(from[i]->data(),
               std::span<float>(to[i]->data(), static_cast<std::size_t>(to[i]->size())));
  return host;
}

DeviceStash::DeviceStash(DeviceKernels& k, const LayerShape& s, core::Recompute mode)
    : recompute(mode), x(k, count(s.tokens(), s.hidden)) {
  if (mode == core::Recompute::Full) return;  // the layer input only
  qkv = DeviceBuffer(k, count(s.tokens(), 3 * s.hidden_local()));
  if (mode == core::Recompute::None) probs = DeviceBuffer(k, score_elements(s));
  ctx = DeviceBuffer(k, count(s.tokens(), s.hidden_local()));
  x1 = DeviceBuffer(k, count(s.tokens(), s.hidden));
  u = DeviceBuffer(k, count(s.tokens(), s.ffn_local()));
  act = DeviceBuffer(k, count(s.tokens(), s.ffn_local()));
}

std::size_t DeviceStash::bytes() const {
  std::size_t n = 0;
  for (const DeviceBuffer* b : {&x, &qkv, &probs, &ctx, &x1, &u, &act}) n += b->size();
  return n * sizeof(float);
}

DeviceOutputGrads::DeviceOutputGrads(DeviceKernels& k, const LayerShape& s)
    : dy(k, count(s.tokens(), s.hidden)),
      du(k, count(s.tokens(), s.ffn_local())),
      dx1(k, count(s.tokens(), s.hidden)),
      dqkv(k, count(s.tokens(), 3 * s.hidden_local())) {}

std::size_t DeviceOutputGrads::bytes() const {
  return (dy.size() + du.size() + dx1.size() + dqkv.size()) * sizeof(float);
}

DeviceWorkspace::DeviceWorkspace(DeviceKernels& k, const LayerShape& s, core::Recompute recompute)
    : a(k, count(s.tokens(), s.hidden)),
      b(k, count(s.tokens(), s.hidden)),
      dact(k, count(s.tokens(), s.ffn_local())),
      dctx(k, count(s.tokens(), s.hidden_local())),
      dprobs(k, score_elements(s)),
      grads(k, s) {
  if (recompute == core::Recompute::None) return;
  scratch.emplace(k, s);
  recompute_out = DeviceBuffer(k, count(s.tokens(), s.hidden));
}

namespace {

// A layer's stashed tensors wherever they are: the stash's, or the
// workspace's scratch for those it does not keep.
struct Tensors {
  float *x, *qkv, *probs, *ctx, *x1, *u, *act;
};

Tensors resolve(DeviceStash& st, DeviceWorkspace& ws) {
  auto pick = [&ws](DeviceBuffer& kept, DeviceBuffer DeviceStash::*member) {
    return kept.size() > 0 ? kept.data() : ((*ws.scratch).*member).data();
  };
  return {pick(st.x, &DeviceStash::x),         pick(st.qkv, &DeviceStash::qkv),
          pick(st.probs, &DeviceStash::probs), pick(st.ctx, &DeviceStash::ctx),
          pick(st.x1, &DeviceStash::x1),       pick(st.u, &DeviceStash::u),
          pick(st.act, &DeviceStash::act)};
}

// P_h = softmax((Q_h K_h^T) x scale) for every head: the attention core's
// part that selective recompute drops and redoes.
void attention_probs(DeviceKernels& k, const LayerShape& s, const Tensors& t) {
  const int seq = s.seq_len, d = s.head_dim(), hl = s.hidden_local(), w3 = 3 * hl;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  for (int b = 0; b < s.sequences; ++b) {
    const HeadBatch hb{s, b};
    hb.gemm(k, seq, seq, d, t.qkv, hb.columns(w3, 0), t.qkv, hb.columns(w3, hl, true), t.probs,
            hb.scores(), scale);
  }
  k.causal_softmax(t.probs, s.sequences * s.heads_local(), seq);
}

void forward(DeviceKernels& k, const DeviceLayerTensors& w, const LayerShape& s, const float* x,
             float* out, const Tensors& t, DeviceWorkspace& ws, const DeviceTpReduce& tp_reduce) {
  const int tk = s.tokens(), h = s.hidden, hl = s.hidden_local(), fl = s.ffn_local();
  const int seq = s.seq_len, d = s.head_dim(), w3 = 3 * hl;
  if (x != t.x) k.copy(x, t.x, count(tk, h));  // a recomputation starts from the stash's x
  k.gemm(plain(tk, w3, h, t.x, h, false, w.wqkv.data(), w3, false, t.qkv, w3));
  attention_probs(k, s, t);
  for (int b = 0; b < s.sequences; ++b) {
    const HeadBatch hb{s, b};
    // Context: C_h = P_h V_h.
    hb.gemm(k, seq, d, seq, t.probs, hb.scores(), t.qkv, hb.columns(w3, 2 * hl), t.ctx,
            hb.columns(hl, 0));
  }
  k.gemm(plain(tk, h, hl, t.ctx, hl, false, w.wo.data(), h, false, ws.a.data(), h));
  tp_reduce(ws.a.data(), count(tk, h));
  k.add(t.x, ws.a.data(), t.x1, count(tk, h));
  k.gemm(plain(tk, fl, h, t.x1, h, false, w.w1.data(), fl, false, t.u, fl));
  k.gelu(t.u, t.act, count(tk, fl));
  k.gemm(plain(tk, h, fl, t.act, fl, false, w.w2.data(), h, false, ws.b.data(), h));
  tp_reduce(ws.b.data(), count(tk, h));
  k.add(t.x1, ws.b.data(), out, count(tk, h));
}

}  // namespace

void device_layer_forward(DeviceKernels& k, const DeviceLayerTensors& w, const LayerShape& s,
                          const float* x, float* out, DeviceStash& st, DeviceWorkspace& ws,
                          const DeviceTpReduce& tp_reduce) {
  forward(k, w, s, x, out, resolve(st, ws), ws, tp_reduce);
}

void device_layer_backward(DeviceKernels& k, const DeviceLayerTensors& w, const LayerShape& s,
                           DeviceStash& st, const float* dy, float* dx, DeviceLayerTensors& g,
                           DeviceWorkspace& ws, const DeviceTpReduce& tp_reduce) {
  device_layer_backward_input(k, w, s, st, dy, dx, ws.grads, ws, tp_reduce);
  device_layer_backward_weight(k, s, st, ws.grads, g, ws);
}

void device_layer_backward_input(DeviceKernels& k, const DeviceLayerTensors& w, const LayerShape& s,
                                 DeviceStash& st, const float* dy, float* dx, DeviceOutputGrads& og,
                                 DeviceWorkspace& ws, const DeviceTpReduce& tp_reduce) {
  const int tk = s.tokens(), h = s.hidden, hl = s.hidden_local(), fl = s.ffn_local();
  const int seq = s.seq_len, d = s.head_dim(), w3 = 3 * hl;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  const Tensors t = resolve(st, ws);
  // What the stash did not keep, recomputed as forward made it (same bits).
  if (st.recompute == core::Recompute::Full)
    forward(k, w, s, t.x, ws.recompute_out.data(), t, ws, tp_reduce);
  if (st.recompute == core::Recompute::Selective) attention_probs(k, s, t);
  float* dx1 = og.dx1.data();
  float* dx_attn = ws.b.data();
  // dy is kept for W2's gradient (dx, written last, may be dy's buffer).
  k.copy(dy, og.dy.data(), count(tk, h));
  // MLP: out = x1 + gelu(x1 W1) W2.
  k.gemm(plain(tk, fl, h, dy, h, false, w.w2.data(), h, true, ws.dact.data(), fl));
  k.gelu_backward(ws.dact.data(), t.u, og.du.data(), count(tk, fl));
  k.gemm(plain(tk, h, fl, og.du.data(), fl, false, w.w1.data(), fl, true, dx1, h));
  tp_reduce(dx1, count(tk, h));
  k.add(dy, dx1, dx1, count(tk, h));
  // Attention: x1 = x + ctx Wo.
  k.gemm(plain(tk, hl, h, dx1, h, false, w.wo.data(), h, true, ws.dctx.data(), hl));
  float* dqkv = og.dqkv.data();
  for (int b = 0; b < s.sequences; ++b) {
    const HeadBatch hb{s, b};
    // dP_h = dC_h V_h^T; dV_h = P_h^T dC_h.
    hb.gemm(k, seq, seq, d, ws.dctx.data(), hb.columns(hl, 0), t.qkv, hb.columns(w3, 2 * hl, true),
            ws.dprobs.data(), hb.scores());
    hb.gemm(k, seq, d, seq, t.probs, hb.scores(true), ws.dctx.data(), hb.columns(hl, 0), dqkv,
            hb.columns(w3, 2 * hl));
  }
  // dS = softmax'(P, dP) x scale, in place over dP.
  k.causal_softmax_backward(t.probs, ws.dprobs.data(), ws.dprobs.data(),
                            s.sequences * s.heads_local(), seq, scale);
  for (int b = 0; b < s.sequences; ++b) {
    const HeadBatch hb{s, b};
    // dQ_h = dS_h K_h, dK_h = dS_h^T Q_h.
    hb.gemm(k, seq, d, seq, ws.dprobs.data(), hb.scores(), t.qkv, hb.columns(w3, hl), dqkv,
            hb.columns(w3, 0));
    hb.gemm(k, seq, d, seq, ws.dprobs.data(), hb.scores(true), t.qkv, hb.columns(w3, 0), dqkv,
            hb.columns(w3, hl));
  }
  k.gemm(plain(tk, h, w3, dqkv, w3, false, w.wqkv.data(), w3, true, dx_attn, h));
  tp_reduce(dx_attn, count(tk, h));
  k.add(dx1, dx_attn, dx, count(tk, h));
}

void device_layer_backward_weight(DeviceKernels& k, const LayerShape& s, DeviceStash& st,
                                  const DeviceOutputGrads& og, DeviceLayerTensors& g,
                                  DeviceWorkspace& ws) {
  const int tk = s.tokens(), h = s.hidden, hl = s.hidden_local(), fl = s.ffn_local();
  const int w3 = 3 * hl;
  const Tensors t = resolve(st, ws);
  k.gemm(plain(fl, h, tk, t.act, fl, true, og.dy.data(), h, false, g.w2.data(), h, 1.0f));
  k.gemm(plain(h, fl, tk, t.x1, h, true, og.du.data(), fl, false, g.w1.data(), fl, 1.0f));
  k.gemm(plain(hl, h, tk, t.ctx, hl, true, og.dx1.data(), h, false, g.wo.data(), h, 1.0f));
  k.gemm(plain(h, w3, tk, t.x, h, true, og.dqkv.data(), w3, false, g.wqkv.data(), w3, 1.0f));
}

DeviceOptimizerState zero_device_state(DeviceKernels& k, const OptimizerConfig& config,
                                       const LayerShape& shape) {
  DeviceOptimizerState state;
  if (config.kind == OptimizerKind::Adam) {
    state.m = zero_device_layer(k, shape);
    state.v = zero_device_layer(k, shape);
  }
  return state;
}

void device_optimizer_update(DeviceKernels& k, const OptimizerConfig& c, long long step,
                             DeviceLayerTensors& weights, const DeviceLayerTensors& grads,
                             DeviceOptimizerState& state) {
  auto w = weights.all();
  const auto g = grads.all();
  if (c.kind == OptimizerKind::Sgd) {
    for (std::size_t i = 0; i < w.size(); ++i)
      k.sgd_update(w[i]->data(), g[i]->data(), w[i]->size(), c.learning_rate);
    return;
  }
  AdamStep s;
  s.learning_rate = c.learning_rate;
  s.beta1 = c.beta1;
  s.beta2 = c.beta2;
  s.epsilon = c.epsilon;
  s.correction1 = 1.0f - std::pow(c.beta1, static_cast<float>(step));
  s.correction2 = 1.0f - std::pow(c.beta2, static_cast<float>(step));
  auto m = state.m.all();
  auto v = state.v.all();
  for (std::size_t i = 0; i < w.size(); ++i)
    k.adam_update(w[i]->data(), m[i]->data(), v[i]->data(), g[i]->data(), w[i]->size(), s);
}

}  // namespace parashift::hw
