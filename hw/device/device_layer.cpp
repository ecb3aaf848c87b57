#include "hw/device/device_layer.hpp"

#include <cmath>

#include "hw/model/dp_shards.hpp"

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
    : recompute(mode), x(k, count(s.tokens_local(), s.hidden)) {
  if (mode == core::Recompute::Full) return;  // the layer input only
  qkv = DeviceBuffer(k, count(s.tokens(), 3 * s.hidden_local()));
  if (mode == core::Recompute::None) probs = DeviceBuffer(k, score_elements(s));
  ctx = DeviceBuffer(k, count(s.tokens(), s.hidden_local()));
  x1 = DeviceBuffer(k, count(s.tokens_local(), s.hidden));
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
      dqkv(k, count(s.tokens(), 3 * s.hidden_local())) {
  if (!s.sequence_parallel) return;
  x_full = DeviceBuffer(k, count(s.tokens(), s.hidden));
  x1_full = DeviceBuffer(k, count(s.tokens(), s.hidden));
}

std::size_t DeviceOutputGrads::bytes() const {
  std::size_t n = 0;
  for (const DeviceBuffer* b : {&dy, &du, &dx1, &dqkv, &x_full, &x1_full}) n += b->size();
  return n * sizeof(float);
}

DeviceWorkspace::DeviceWorkspace(DeviceKernels& k, const LayerShape& s, core::Recompute recompute)
    : a(k, count(s.tokens(), s.hidden)),
      b(k, count(s.tokens(), s.hidden)),
      dact(k, count(s.tokens(), s.ffn_local())),
      dctx(k, count(s.tokens(), s.hidden_local())),
      dprobs(k, score_elements(s)),
      grads(k, s) {
  if (s.sequence_parallel) {
    x_full = DeviceBuffer(k, count(s.tokens(), s.hidden));
    x1_full = DeviceBuffer(k, count(s.tokens(), s.hidden));
    a_local = DeviceBuffer(k, count(s.tokens_local(), s.hidden));
    b_local = DeviceBuffer(k, count(s.tokens_local(), s.hidden));
    dx1_local = DeviceBuffer(k, count(s.tokens_local(), s.hidden));
  }
  if (recompute == core::Recompute::None) return;
  // Scratch for exactly what the stashes leave out: the probabilities
  // (selective), everything but the layer input (full).
  DeviceStash dropped(k, s);
  if (recompute == core::Recompute::Selective) {
    for (DeviceBuffer* buf :
         {&dropped.x, &dropped.qkv, &dropped.ctx, &dropped.x1, &dropped.u, &dropped.act})
      *buf = DeviceBuffer();
  } else {
    dropped.x = DeviceBuffer();
    recompute_out = DeviceBuffer(k, count(s.tokens_local(), s.hidden));
  }
  scratch.emplace(std::move(dropped));
}

std::size_t DeviceWorkspace::bytes() const {
  std::size_t n = 0;
  for (const DeviceBuffer* buf : {&a, &b, &dact, &dctx, &dprobs, &x_full, &x1_full, &a_local,
                                  &b_local, &dx1_local, &recompute_out})
    n += buf->size() * sizeof(float);
  return n + grads.bytes() + (scratch ? scratch->bytes() : 0);
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

// The full tokens x hidden input of a column-parallel GEMM from this
// rank's `local` activations: `local` itself, or (sequence parallelism)
// the group's shards gathered into `full`.
const float* gathered(const LayerShape& s, const DeviceTpComm& tp, const float* local,
                      DeviceBuffer& full) {
  if (!s.sequence_parallel) return local;
  tp.all_gather(local, full.data(), count(s.tokens_local(), s.hidden));
  return full.data();
}

// A row-parallel GEMM's partial output `partial` (tokens x hidden) summed
// over the group: in place, or (sequence parallelism) this rank's tokens
// into `local`. Returns the tokens_local x hidden sum.
const float* reduced(const LayerShape& s, const DeviceTpComm& tp, float* partial,
                     DeviceBuffer& local) {
  if (!s.sequence_parallel) {
    tp.all_reduce(partial, count(s.tokens(), s.hidden));
    return partial;
  }
  tp.reduce_scatter(partial, local.data(), count(s.tokens_local(), s.hidden));
  return local.data();
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
             float* out, const Tensors& t, DeviceWorkspace& ws, const DeviceTpComm& tp) {
  const int tk = s.tokens(), tl = s.tokens_local(), h = s.hidden, hl = s.hidden_local();
  const int fl = s.ffn_local(), seq = s.seq_len, d = s.head_dim(), w3 = 3 * hl;
  if (x != t.x) k.copy(x, t.x, count(tl, h));  // a recomputation starts from the stash's x
  const float* x_in = gathered(s, tp, t.x, ws.x_full);
  k.gemm(plain(tk, w3, h, x_in, h, false, w.wqkv.data(), w3, false, t.qkv, w3));
  attention_probs(k, s, t);
  for (int b = 0; b < s.sequences; ++b) {
    const HeadBatch hb{s, b};
    // Context: C_h = P_h V_h.
    hb.gemm(k, seq, d, seq, t.probs, hb.scores(), t.qkv, hb.columns(w3, 2 * hl), t.ctx,
            hb.columns(hl, 0));
  }
  k.gemm(plain(tk, h, hl, t.ctx, hl, false, w.wo.data(), h, false, ws.a.data(), h));
  k.add(t.x, reduced(s, tp, ws.a.data(), ws.a_local), t.x1, count(tl, h));
  const float* x1_in = gathered(s, tp, t.x1, ws.x1_full);
  k.gemm(plain(tk, fl, h, x1_in, h, false, w.w1.data(), fl, false, t.u, fl));
  k.gelu(t.u, t.act, count(tk, fl));
  k.gemm(plain(tk, h, fl, t.act, fl, false, w.w2.data(), h, false, ws.b.data(), h));
  k.add(t.x1, reduced(s, tp, ws.b.data(), ws.b_local), out, count(tl, h));
}

}  // namespace

void device_layer_forward(DeviceKernels& k, const DeviceLayerTensors& w, const LayerShape& s,
                          const float* x, float* out, DeviceStash& st, DeviceWorkspace& ws,
                          const DeviceTpComm& tp) {
  forward(k, w, s, x, out, resolve(st, ws), ws, tp);
}

void device_layer_backward(DeviceKernels& k, const DeviceLayerTensors& w, const LayerShape& s,
                           DeviceStash& st, const float* dy, float* dx, DeviceLayerTensors& g,
                           DeviceWorkspace& ws, const DeviceTpComm& tp) {
  device_layer_backward_input(k, w, s, st, dy, dx, ws.grads, ws, tp);
  device_layer_backward_weight(k, s, st, ws.grads, g, ws);
}

void device_layer_backward_input(DeviceKernels& k, const DeviceLayerTensors& w, const LayerShape& s,
                                 DeviceStash& st, const float* dy, float* dx, DeviceOutputGrads& og,
                                 DeviceWorkspace& ws, const DeviceTpComm& tp) {
  const int tk = s.tokens(), tl = s.tokens_local(), h = s.hidden, hl = s.hidden_local();
  const int fl = s.ffn_local(), seq = s.seq_len, d = s.head_dim(), w3 = 3 * hl;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  const bool sp = s.sequence_parallel;
  const Tensors t = resolve(st, ws);
  // What the stash did not keep, recomputed as forward made it (same bits).
  if (st.recompute == core::Recompute::Full)
    forward(k, w, s, t.x, ws.recompute_out.data(), t, ws, tp);
  if (st.recompute == core::Recompute::Selective) attention_probs(k, s, t);
  // dy in full is kept for W2's gradient (dx, written last, may be dy's
  // buffer); sequence parallelism gathers it (the row-parallel GEMM's
  // backward of its reduce-scatter).
  if (sp) {
    tp.all_gather(dy, og.dy.data(), count(tl, h));
  } else {
    k.copy(dy, og.dy.data(), count(tk, h));
  }
  // MLP: out = x1 + gelu(x1 W1) W2.
  k.gemm(plain(tk, fl, h, og.dy.data(), h, false, w.w2.data(), h, true, ws.dact.data(), fl));
  k.gelu_backward(ws.dact.data(), t.u, og.du.data(), count(tk, fl));
  // dx1 (this rank's tokens) = dy + the MLP's input gradient, summed over the group.
  float* mlp_in = sp ? ws.a.data() : og.dx1.data();
  k.gemm(plain(tk, h, fl, og.du.data(), fl, false, w.w1.data(), fl, true, mlp_in, h));
  float* dx1 = sp ? ws.dx1_local.data() : og.dx1.data();
  if (sp) {
    tp.reduce_scatter(mlp_in, dx1, count(tl, h));
  } else {
    tp.all_reduce(dx1, count(tk, h));
  }
  k.add(dy, dx1, dx1, count(tl, h));
  // Attention: x1 = x + ctx Wo, from dx1 in full (gathered under sequence parallelism).
  if (sp) tp.all_gather(dx1, og.dx1.data(), count(tl, h));
  k.gemm(plain(tk, hl, h, og.dx1.data(), h, false, w.wo.data(), h, true, ws.dctx.data(), hl));
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
  k.gemm(plain(tk, h, w3, dqkv, w3, false, w.wqkv.data(), w3, true, ws.b.data(), h));
  k.add(dx1, reduced(s, tp, ws.b.data(), ws.b_local), dx, count(tl, h));
  // The weight pass's inputs in full, gathered now (W may run much later);
  // a full recompute has just gathered them.
  if (sp && st.recompute == core::Recompute::Full) {
    k.copy(ws.x_full.data(), og.x_full.data(), count(tk, h));
    k.copy(ws.x1_full.data(), og.x1_full.data(), count(tk, h));
  } else if (sp) {
    tp.all_gather(t.x, og.x_full.data(), count(tl, h));
    tp.all_gather(t.x1, og.x1_full.data(), count(tl, h));
  }
}

void device_layer_backward_weight(DeviceKernels& k, const LayerShape& s, DeviceStash& st,
                                  const DeviceOutputGrads& og, DeviceLayerTensors& g,
                                  DeviceWorkspace& ws) {
  const int tk = s.tokens(), h = s.hidden, hl = s.hidden_local(), fl = s.ffn_local();
  const int w3 = 3 * hl;
  const Tensors t = resolve(st, ws);
  const float* x = s.sequence_parallel ? og.x_full.data() : t.x;
  const float* x1 = s.sequence_parallel ? og.x1_full.data() : t.x1;
  k.gemm(plain(fl, h, tk, t.act, fl, true, og.dy.data(), h, false, g.w2.data(), h, 1.0f));
  k.gemm(plain(h, fl, tk, x1, h, true, og.du.data(), fl, false, g.w1.data(), fl, 1.0f));
  k.gemm(plain(hl, h, tk, t.ctx, hl, true, og.dx1.data(), h, false, g.wo.data(), h, 1.0f));
  k.gemm(plain(h, w3, tk, x, h, true, og.dqkv.data(), w3, false, g.wqkv.data(), w3, 1.0f));
}

DeviceOptimizerState zero_device_state(DeviceKernels& k, const OptimizerConfig& config,
                                       const LayerShape& shape, int shards, int shard) {
  DeviceOptimizerState state;
  if (config.kind != OptimizerKind::Adam) return state;
  state.m = zero_device_layer(k, shape);
  state.v = zero_device_layer(k, shape);
  if (shards == 1) return state;
  for (DeviceLayerTensors* moments : {&state.m, &state.v})
    for (DeviceBuffer* b : moments->all())
      *b = DeviceBuffer(k, shard_of(b->size(), shards, shard).count);
  return state;
}

void device_optimizer_update_range(DeviceKernels& k, const OptimizerConfig& c, long long step,
                                   float* weights, const float* grad, float* m, float* v,
                                   std::size_t count) {
  if (count == 0) return;
  if (c.kind == OptimizerKind::Sgd) {
    k.sgd_update(weights, grad, count, c.learning_rate);
    return;
  }
  AdamStep s;
  s.learning_rate = c.learning_rate;
  s.beta1 = c.beta1;
  s.beta2 = c.beta2;
  s.epsilon = c.epsilon;
  s.correction1 = 1.0f - std::pow(c.beta1, static_cast<float>(step));
  s.correction2 = 1.0f - std::pow(c.beta2, static_cast<float>(step));
  k.adam_update(weights, m, v, grad, count, s);
}

void device_optimizer_update(DeviceKernels& k, const OptimizerConfig& c, long long step,
                             DeviceLayerTensors& weights, const DeviceLayerTensors& grads,
                             DeviceOptimizerState& state) {
  auto w = weights.all();
  const auto g = grads.all();
  const bool adam = c.kind == OptimizerKind::Adam;
  for (std::size_t i = 0; i < w.size(); ++i)
    device_optimizer_update_range(k, c, step, w[i]->data(), g[i]->data(),
                                  adam ? state.m.all()[i]->data() : nullptr,
                                  adam ? state.v.all()[i]->data() : nullptr, w[i]->size());
}

}  // namespace parashift::hw
