#include "hw/calib/executor_kernels.hpp"

#include <algorithm>

#include "core/input_error.hpp"
#include "hw/calib/kernel_timer.hpp"
#include "hw/cpu/executor_gemm.hpp"
#include "hw/model/layer_ops.hpp"
#include "hw/model/pointwise.hpp"
#include "hw/model/synthetic_data.hpp"

namespace parashift::hw {

namespace {

double slowest(Communicator& world, double value) {
  world.all_reduce_max(std::span<double>(&value, 1));
  return value;
}

void set_kernel(CalibrationProfile& p, const std::string& name, double ns_per_element) {
  for (auto& k : p.kernels)
    if (k.kernel == name) {
      k.ns_per_element = ns_per_element;
      return;
    }
  p.kernels.push_back({name, ns_per_element});
}

void set_gemm(CalibrationProfile& p, const GemmPoint& g) {
  for (auto& o : p.gemm)
    if (o.m == g.m && o.n == g.n && o.k == g.k && o.a_transposed == g.a_transposed &&
        o.b_transposed == g.b_transposed) {
      o = g;
      return;
    }
  p.gemm.push_back(g);
}

Matrix ramp(int rows, int cols) {
  Matrix m(rows, cols);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) m(i, j) = static_cast<float>((i + 3 * j) % 11) / 11.0f - 0.5f;
  return m;
}

}  // namespace

void measure_executor_kernels(Communicator& world, const LayerShape& shape, int repeats,
                              CalibrationProfile& p) {
  for (const GemmOp& op : distinct_gemms(shape)) {
    world.barrier();
    const double s =
        slowest(world, time_executor_gemm(op, repeats, KernelClock::ThreadCpu).median_s);
    set_gemm(p, {op.m, op.n, op.k, op.flops() / s, op.a_transposed, op.b_transposed});
  }
  auto record = [&](const std::string& name, double elements, auto&& kernel) {
    world.barrier();
    const double s = slowest(world, time_kernel(repeats, kernel, KernelClock::ThreadCpu).median_s);
    set_kernel(p, name, s * 1e9 / elements);
  };
  const int t = shape.tokens(), fl = shape.ffn_local(), seq = shape.seq_len;
  const Matrix u = ramp(t, fl);
  Matrix act;
  record(to_string(PointwiseKind::Gelu), static_cast<double>(u.size()), [&] { act = gelu(u); });
  record(to_string(PointwiseKind::GeluBackward), static_cast<double>(u.size()),
         [&] { act = gelu_backward(u, u); });
  const Matrix scores0 = ramp(seq, seq);
  Matrix scores = scores0;
  // The copy restores the input; it costs one pass, as the executor's GEMM output write does not.
  record(to_string(PointwiseKind::CausalSoftmax), static_cast<double>(scores.size()), [&] {
    scores = scores0;
    causal_softmax(scores);
  });
  Matrix ds;
  record(to_string(PointwiseKind::CausalSoftmaxBackward), static_cast<double>(scores.size()),
         [&] { ds = causal_softmax_backward(scores, scores0, 0.125f); });
  Matrix x, target;
  record(kDataKernel, static_cast<double>(t) * shape.hidden,
         [&] { x = micro_batch_input(shape, 1, 0); });
  target = micro_batch_target(shape, 1, 0);
  LossTerm loss;
  record(kLossKernel, static_cast<double>(x.size()),
         [&] { loss = squared_error_loss(x, target, 1); });
  for (const OptimizerKind kind : {OptimizerKind::Adam, OptimizerKind::Sgd}) {
    OptimizerConfig config;
    config.kind = kind;
    LayerTensors w = zero_layer(shape), g = zero_layer(shape);
    OptimizerState state = zero_state(config, shape);
    long long step = 0;
    record(kind == OptimizerKind::Adam ? kAdamKernel : kSgdKernel,
           static_cast<double>(w.elements()),
           [&] { optimizer_update(config, ++step, w, g, state); });
  }
}

double measure_cpu_share(Communicator& world, const LayerShape& shape, double window_s) {
  const GemmOp op{shape.tokens(), shape.ffn_local(), shape.hidden, false, false, 1};
  world.barrier();
  const double wall0 = clock_s(KernelClock::Wall), cpu0 = clock_s(KernelClock::ThreadCpu);
  while (clock_s(KernelClock::Wall) - wall0 < window_s)
    time_executor_gemm(op, 1, KernelClock::Wall);
  double share = (clock_s(KernelClock::ThreadCpu) - cpu0) / (clock_s(KernelClock::Wall) - wall0);
  share = -std::min(1.0, share);
  world.all_reduce_max(std::span<double>(&share, 1));  // max of -share: the smallest share
  return -share;
}

double kernel_ns_per_element(const CalibrationProfile& p, const std::string& kernel) {
  for (const auto& k : p.kernels)
    if (k.kernel == kernel) return k.ns_per_element;
  throw core::InputError("calibration profile has no '" + kernel +
                         "' kernel: calibrate with --scenario for the executor's kernels");
}

}  // namespace parashift::hw
