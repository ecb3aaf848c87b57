#include "hw/calib/executor_kernels.hpp"

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/input_error.hpp"
#include "hw/calib/kernel_timer.hpp"
#include "hw/cpu/executor_gemm.hpp"
#include "hw/cpu/host_allocator.hpp"
#include "hw/device/device_layer.hpp"
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

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

Matrix ramp(int rows, int cols) {
  Matrix m(rows, cols);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) m(i, j) = static_cast<float>((i + 3 * j) % 11) / 11.0f - 0.5f;
  return m;
}

}  // namespace

// Every kernel once per pass: each kernel's samples are spread over all the
// passes, as an iteration's kernels are spread over the iteration, so a change
// of the machine's speed while calibrating (another guest on the host, the
// clock) moves every kernel alike instead of whichever kernel it fell on.
struct ExecutorKernelBench::Impl {
  struct Bench {
    std::string name;  // empty for a GEMM
    GemmOp op;
    double elements = 0;
    std::function<void()> run;
    std::vector<double> seconds;
  };
  struct OptimizerBench {
    OptimizerConfig config;
    DeviceLayerTensors w, g;
    DeviceOptimizerState state;
    long long step = 0;
  };
  LayerShape shape;
  HostKernels kernels;  // the CPU executor's kernels; declared before the buffers
  std::vector<Bench> benches;
  std::vector<std::unique_ptr<ExecutorGemm>> gemms;
  std::vector<std::unique_ptr<OptimizerBench>> optimizers;
  DeviceBuffer u, act, scores0, scores, ds, x, target, dy;
  double loss = 0;
  double cpu_s = 0, wall_s = 0;
  bool warm = false;

  DeviceBuffer upload(const Matrix& m) {
    DeviceBuffer b(kernels, static_cast<std::size_t>(m.size()));
    kernels.upload(std::span<const float>(m.data(), b.size()), b.data());
    return b;
  }

  // The kernels the CPU executor runs (HwBackend on HostKernels: the device
  // layer's calls), on the layer's own sizes.
  explicit Impl(const LayerShape& layer) : shape(layer) {
    keep_freed_host_memory();  // as the executor runs
    for (const GemmOp& op : distinct_gemms(shape)) {
      gemms.push_back(std::make_unique<ExecutorGemm>(op));
      ExecutorGemm* g = gemms.back().get();
      benches.push_back({"", op, 0, [g] { g->run(); }, {}});
    }
    auto add = [&](const std::string& name, double elements, std::function<void()> run) {
      benches.push_back({name, GemmOp{}, elements, std::move(run), {}});
    };
    const int t = shape.tokens(), fl = shape.ffn_local(), seq = shape.seq_len;
    u = upload(ramp(t, fl));
    act = DeviceBuffer(kernels, u.size());
    add(to_string(PointwiseKind::Gelu), static_cast<double>(u.size()),
        [this] { kernels.gelu(u.data(), act.data(), u.size()); });
    add(to_string(PointwiseKind::GeluBackward), static_cast<double>(u.size()),
        [this] { kernels.gelu_backward(u.data(), u.data(), act.data(), u.size()); });
    scores0 = upload(ramp(seq, seq));
    scores = DeviceBuffer(kernels, scores0.size());
    ds = DeviceBuffer(kernels, scores0.size());
    // The copy restores the input; it costs one pass, as the executor's GEMM output write does not.
    add(to_string(PointwiseKind::CausalSoftmax), static_cast<double>(scores.size()), [this, seq] {
      kernels.copy(scores0.data(), scores.data(), scores.size());
      kernels.causal_softmax(scores.data(), 1, seq);
    });
    add(to_string(PointwiseKind::CausalSoftmaxBackward), static_cast<double>(scores.size()),
        [this, seq] {
          kernels.causal_softmax_backward(scores.data(), scores0.data(), ds.data(), 1, seq, 0.125f);
        });
    // A micro-batch's input (or target) made on the host and put in the executor's buffer.
    x = upload(micro_batch_input(shape, 1, 0));
    target = upload(micro_batch_target(shape, 1, 0));
    dy = DeviceBuffer(kernels, x.size());
    add(kDataKernel, static_cast<double>(t) * shape.hidden, [this] {
      const Matrix made = micro_batch_input(shape, 1, 0);
      kernels.upload(std::span<const float>(made.data(), x.size()), x.data());
    });
    add(kLossKernel, static_cast<double>(x.size()), [this] {
      loss = kernels.squared_error(x.data(), target.data(), dy.data(), x.size(),
                                   static_cast<double>(x.size()));
    });
    for (const OptimizerKind kind : {OptimizerKind::Adam, OptimizerKind::Sgd}) {
      OptimizerConfig config;
      config.kind = kind;
      optimizers.push_back(std::make_unique<OptimizerBench>(OptimizerBench{
          config, zero_device_layer(kernels, shape), zero_device_layer(kernels, shape),
          zero_device_state(kernels, config, shape)}));
      OptimizerBench* o = optimizers.back().get();
      add(kind == OptimizerKind::Adam ? kAdamKernel : kSgdKernel,
          static_cast<double>(layer_parameters(shape)), [this, o] {
            device_optimizer_update(kernels, o->config, ++o->step, o->w, o->g, o->state);
          });
    }
  }

  void pass(Communicator& world, bool record) {
    world.barrier();  // the ranks run the same kernels at once, as training loads them
    const double wall0 = clock_s(KernelClock::Wall), cpu0 = clock_s(KernelClock::ThreadCpu);
    for (Bench& b : benches) {
      const double start = clock_s(KernelClock::ThreadCpu);
      b.run();
      const double s = clock_s(KernelClock::ThreadCpu) - start;
      if (record) b.seconds.push_back(s);
    }
    // A rank waiting in the barrier polls, so its CPU time runs on unless
    // other work takes the core: the share of a core is CPU over wall time.
    world.barrier();
    if (record) {
      cpu_s += clock_s(KernelClock::ThreadCpu) - cpu0;
      wall_s += clock_s(KernelClock::Wall) - wall0;
    }
  }
};

ExecutorKernelBench::ExecutorKernelBench(const LayerShape& shape)
    : impl_(std::make_unique<Impl>(shape)) {}
ExecutorKernelBench::~ExecutorKernelBench() = default;

void ExecutorKernelBench::run_passes(Communicator& world, int passes) {
  if (!impl_->warm) {
    impl_->pass(world, false);  // warms caches and allocations
    impl_->warm = true;
  }
  for (int i = 0; i < passes; ++i) impl_->pass(world, true);
}

void ExecutorKernelBench::clear() {
  for (Impl::Bench& b : impl_->benches) b.seconds.clear();
  impl_->cpu_s = 0;
  impl_->wall_s = 0;
}

void ExecutorKernelBench::write(Communicator& world, CalibrationProfile& p) const {
  double share = impl_->wall_s > 0 ? -std::min(1.0, impl_->cpu_s / impl_->wall_s) : -1.0;
  world.all_reduce_max(std::span<double>(&share, 1));  // max of -share: the smallest share
  p.cpu_share = -share;
  for (const Impl::Bench& b : impl_->benches) {
    const double s = slowest(world, b.seconds.empty() ? 0.0 : median_of(b.seconds));
    if (b.name.empty())
      set_gemm(p, {b.op.m, b.op.n, b.op.k, b.op.flops() / s, b.op.a_transposed, b.op.b_transposed});
    else
      set_kernel(p, b.name, s * 1e9 / b.elements);
  }
}

void measure_executor_kernels(Communicator& world, const LayerShape& shape, int repeats,
                              CalibrationProfile& p) {
  ExecutorKernelBench bench(shape);
  bench.run_passes(world, std::max(1, repeats));
  bench.write(world, p);
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
