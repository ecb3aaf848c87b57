#include "hw/device/device_calibration.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "hw/calib/executor_kernels.hpp"
#include "hw/model/layer_ops.hpp"

namespace parashift::hw {

namespace {

std::size_t count(int rows, int cols) {
  return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
}

// Kernels timed in passes: each pass runs every kernel once, so a burst of
// noise on the machine touches one sample of many kernels rather than all
// the samples of one (as hw/calib/executor_kernels.hpp does on the CPU).
class PassBench {
 public:
  explicit PassBench(DeviceKernels& k) : k_(k) {}
  /// A kernel; its result is the median seconds of one call over `per_call`.
  void add(std::function<void()> call, double per_call = 1.0) {
    entries_.push_back({std::move(call), per_call, {}});
  }
  void run(int passes) {
    for (auto& e : entries_) e.call();  // warm-up: library kernel selection, first-touch
    for (int p = 0; p < std::max(1, passes); ++p)
      for (auto& e : entries_) {
        k_.synchronize();
        const auto start = std::chrono::steady_clock::now();
        e.call();
        k_.synchronize();
        e.seconds.push_back(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      }
  }
  double median_s(std::size_t i) {
    auto& s = entries_[i].seconds;
    std::nth_element(s.begin(), s.begin() + static_cast<long>(s.size() / 2), s.end());
    return std::max(s[s.size() / 2], 1e-9) / entries_[i].per_call;
  }

 private:
  struct Entry {
    std::function<void()> call;
    double per_call;
    std::vector<double> seconds;
  };
  DeviceKernels& k_;
  std::vector<Entry> entries_;
};

// `batch` GEMMs of `op`'s shape in one strided call on contiguous operands.
struct GemmBench {
  GemmBench(DeviceKernels& k, const GemmOp& op, int batch)
      : a(k, count(op.m, op.k) * static_cast<std::size_t>(batch)),
        b(k, count(op.k, op.n) * static_cast<std::size_t>(batch)),
        c(k, count(op.m, op.n) * static_cast<std::size_t>(batch)),
        call(packed_gemm(op, a.data(), b.data(), c.data(), batch)) {}
  DeviceBuffer a, b, c;
  GemmCall call;
};

}  // namespace

GemmCall packed_gemm(const GemmOp& op, const float* a, const float* b, float* c, int batch) {
  GemmCall call;
  call.m = op.m;
  call.n = op.n;
  call.k = op.k;
  call.a_transposed = op.a_transposed;
  call.b_transposed = op.b_transposed;
  call.a = a;
  call.lda = op.a_transposed ? op.m : op.k;
  call.stride_a = static_cast<std::int64_t>(count(op.m, op.k));
  call.b = b;
  call.ldb = op.b_transposed ? op.k : op.n;
  call.stride_b = static_cast<std::int64_t>(count(op.k, op.n));
  call.c = c;
  call.ldc = op.n;
  call.stride_c = static_cast<std::int64_t>(count(op.m, op.n));
  call.batch = batch;
  return call;
}

CalibrationProfile calibrate_device_kernels(DeviceKernels& k, const LayerShape& s, int repeats) {
  CalibrationProfile p;
  p.device = k.name();
  p.ranks = 1;
  p.cpu_share = 1.0;  // a device of its own
  PassBench bench(k);
  // GEMMs: the per-head ones (count = heads x sequences in the op list) run
  // batched over the heads, one call per sequence (device_layer.cpp).
  const int per_head = s.heads_local() * s.sequences;
  std::vector<std::unique_ptr<GemmBench>> gemms;
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
      gemms.push_back(std::make_unique<GemmBench>(k, one, batch));
      bench.add([&k, g = gemms.back().get()] { k.gemm(g->call); }, batch);
      p.gemm.push_back({op.m, op.n, op.k, one.flops(), op.a_transposed, op.b_transposed});
    }
  // Element-wise kernels on the layer's own sizes, per element.
  const std::size_t mlp = count(s.tokens(), s.ffn_local());
  const std::size_t scores = count(per_head * s.seq_len, s.seq_len);
  const std::size_t act = count(s.tokens(), s.hidden);
  const std::size_t most = std::max({mlp, scores, act});
  DeviceBuffer x(k, most), y(k, most), z(k, most);
  const auto n = [](std::size_t elements) { return static_cast<double>(elements); };
  bench.add([&] { k.gelu(x.data(), y.data(), mlp); }, n(mlp));
  bench.add([&] { k.gelu_backward(x.data(), y.data(), z.data(), mlp); }, n(mlp));
  bench.add([&] { k.causal_softmax(x.data(), per_head, s.seq_len); }, n(scores));
  bench.add(
      [&] { k.causal_softmax_backward(x.data(), y.data(), z.data(), per_head, s.seq_len, 0.5f); },
      n(scores));
  // The optimizer per parameter, on one layer's worth.
  const std::size_t params = layer_parameters(s);
  DeviceBuffer w(k, params), g(k, params), m(k, params), v(k, params);
  const AdamStep step{1e-3f, 0.9f, 0.999f, 1e-8f, 0.1f, 0.001f};
  bench.add([&] { k.sgd_update(w.data(), g.data(), params, 1e-3f); }, n(params));
  bench.add([&] { k.adam_update(w.data(), m.data(), v.data(), g.data(), params, step); },
            n(params));
  // The data set is resident: a micro-batch's input is one device copy, and
  // its target nothing; the predictor charges the data kernel for both, so
  // each gets half the copy.
  bench.add([&] { k.copy(x.data(), y.data(), act); }, n(act));
  bench.add([&] { k.squared_error(x.data(), y.data(), z.data(), act, 1.0); }, n(act));
  bench.run(repeats);

  for (std::size_t i = 0; i < p.gemm.size(); ++i)
    p.gemm[i].flops_per_s /= bench.median_s(i);  // held the FLOPs of one GEMM until now
  std::size_t i = p.gemm.size();
  for (const PointwiseKind kind :
       {PointwiseKind::Gelu, PointwiseKind::GeluBackward, PointwiseKind::CausalSoftmax,
        PointwiseKind::CausalSoftmaxBackward})
    p.kernels.push_back({to_string(kind), bench.median_s(i++) * 1e9});
  p.kernels.push_back({kSgdKernel, bench.median_s(i++) * 1e9});
  p.kernels.push_back({kAdamKernel, bench.median_s(i++) * 1e9});
  const double copy_s_per_element = bench.median_s(i++);
  p.kernels.push_back({kDataKernel, 0.5 * copy_s_per_element * 1e9});
  p.kernels.push_back({kLossKernel, bench.median_s(i++) * 1e9});
  p.memory_Bps = 2.0 * sizeof(float) / copy_s_per_element;
  return p;
}

}  // namespace parashift::hw
