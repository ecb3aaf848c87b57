#include "hw/device/device_calibration.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

#include "hw/calib/executor_kernels.hpp"
#include "hw/model/layer_ops.hpp"

namespace parashift::hw {

namespace {

std::size_t count(int rows, int cols) {
  return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
}

template <typename Call>
double median_s(DeviceKernels& k, int repeats, Call&& call) {
  call();  // warm-up: library kernel selection, first-touch
  std::vector<double> seconds;
  for (int r = 0; r < std::max(1, repeats); ++r) {
    k.synchronize();
    const auto start = std::chrono::steady_clock::now();
    call();
    k.synchronize();
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::nth_element(seconds.begin(), seconds.begin() + static_cast<long>(seconds.size() / 2),
                   seconds.end());
  return std::max(seconds[seconds.size() / 2], 1e-9);
}

// Seconds of one GEMM of `op`'s shape: `batch` of them in one strided call
// (contiguous operands), divided by `batch`.
double gemm_s(DeviceKernels& k, const GemmOp& op, int batch, int repeats) {
  const std::size_t a_n = count(op.m, op.k), b_n = count(op.k, op.n), c_n = count(op.m, op.n);
  DeviceBuffer a(k, a_n * static_cast<std::size_t>(batch));
  DeviceBuffer b(k, b_n * static_cast<std::size_t>(batch));
  DeviceBuffer c(k, c_n * static_cast<std::size_t>(batch));
  GemmCall call;
  call.m = op.m;
  call.n = op.n;
  call.k = op.k;
  call.a_transposed = op.a_transposed;
  call.b_transposed = op.b_transposed;
  call.a = a.data();
  call.lda = op.a_transposed ? op.m : op.k;
  call.stride_a = static_cast<std::int64_t>(a_n);
  call.b = b.data();
  call.ldb = op.b_transposed ? op.k : op.n;
  call.stride_b = static_cast<std::int64_t>(b_n);
  call.c = c.data();
  call.ldc = op.n;
  call.stride_c = static_cast<std::int64_t>(c_n);
  call.batch = batch;
  return median_s(k, repeats, [&] { k.gemm(call); }) / batch;
}

}  // namespace

CalibrationProfile calibrate_device_kernels(DeviceKernels& k, const LayerShape& s, int repeats) {
  CalibrationProfile p;
  p.device = k.name();
  p.ranks = 1;
  p.cpu_share = 1.0;  // a device of its own
  // GEMMs: the per-head ones (count = heads x sequences in the op list) run
  // batched over the heads, one call per sequence (device_layer.cpp).
  const int per_head = s.heads_local() * s.sequences;
  for (const auto& ops : {layer_forward_ops(s), layer_backward_ops(s)})
    for (const GemmOp& op : ops.gemms) {
      const bool seen = std::any_of(p.gemm.begin(), p.gemm.end(), [&](const GemmPoint& g) {
        return g.m == op.m && g.n == op.n && g.k == op.k && g.a_transposed == op.a_transposed &&
               g.b_transposed == op.b_transposed;
      });
      if (seen) continue;
      GemmOp one = op;
      one.count = 1;
      const int batch = op.count == per_head ? s.heads_local() : 1;
      p.gemm.push_back({op.m, op.n, op.k, one.flops() / gemm_s(k, one, batch, repeats),
                        op.a_transposed, op.b_transposed});
    }
  // Element-wise kernels on the layer's own sizes.
  const std::size_t mlp = count(s.tokens(), s.ffn_local());
  const std::size_t scores = count(per_head * s.seq_len, s.seq_len);
  const std::size_t act = count(s.tokens(), s.hidden);
  const std::size_t most = std::max({mlp, scores, act});
  DeviceBuffer x(k, most), y(k, most), z(k, most);
  const auto per_element = [&](std::size_t n, auto&& call) {
    return median_s(k, repeats, call) * 1e9 / static_cast<double>(n);
  };
  p.kernels.push_back(
      {to_string(PointwiseKind::Gelu), per_element(mlp, [&] { k.gelu(x.data(), y.data(), mlp); })});
  p.kernels.push_back({to_string(PointwiseKind::GeluBackward), per_element(mlp, [&] {
                         k.gelu_backward(x.data(), y.data(), z.data(), mlp);
                       })});
  p.kernels.push_back({to_string(PointwiseKind::CausalSoftmax), per_element(scores, [&] {
                         k.causal_softmax(x.data(), per_head, s.seq_len);
                       })});
  p.kernels.push_back({to_string(PointwiseKind::CausalSoftmaxBackward), per_element(scores, [&] {
                         k.causal_softmax_backward(x.data(), y.data(), z.data(), per_head,
                                                   s.seq_len, 0.5f);
                       })});
  // The optimizer per parameter, on one layer's worth.
  const std::size_t params = count(s.hidden, 4 * s.hidden_local() + 2 * s.ffn_local());
  DeviceBuffer w(k, params), g(k, params), m(k, params), v(k, params);
  p.kernels.push_back(
      {kSgdKernel, per_element(params, [&] { k.sgd_update(w.data(), g.data(), params, 1e-3f); })});
  AdamStep step{1e-3f, 0.9f, 0.999f, 1e-8f, 0.1f, 0.001f};
  p.kernels.push_back({kAdamKernel, per_element(params, [&] {
                         k.adam_update(w.data(), m.data(), v.data(), g.data(), params, step);
                       })});
  // The data set is resident: a micro-batch's input is one device copy, and
  // its target nothing; the predictor charges the data kernel for both, so
  // each gets half the copy.
  const double copy_s = median_s(k, repeats, [&] { k.copy(x.data(), y.data(), act); });
  p.kernels.push_back({kDataKernel, 0.5 * copy_s * 1e9 / static_cast<double>(act)});
  p.kernels.push_back({kLossKernel, per_element(act, [&] {
                         k.squared_error(x.data(), y.data(), z.data(), act, 1.0);
                       })});
  p.memory_Bps = 2.0 * sizeof(float) * static_cast<double>(act) / copy_s;
  return p;
}

}  // namespace parashift::hw
