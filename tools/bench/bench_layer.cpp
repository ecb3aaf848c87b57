// One layer's forward and backward on the CPU, two ways: the reference layer
// (hw/model/layer.cpp, Eigen matrices) and the device layer on HostKernels
// (hw/device/device_layer.cpp, what HwBackend runs), on the shapes of
// scenarios/hw-cpu-4rank.yaml's layer (hidden 256, 4 heads, ffn 1024,
// seq 128) and a wider one. What moving the executor onto the kernel
// interface costs on the CPU.
#include <benchmark/benchmark.h>

#include "hw/device/device_layer.hpp"
#include "hw/device/host_kernels.hpp"
#include "hw/model/layer.hpp"
#include "hw/model/synthetic_data.hpp"

namespace {

using namespace parashift;

hw::LayerShape shape_of(const benchmark::State& state) {
  const int hidden = static_cast<int>(state.range(0));
  return {hidden, 4, 4 * hidden, 1, 128, 1};
}

void set_counters(benchmark::State& state, const hw::LayerShape& s) {
  // Forward, then backward (twice the forward's FLOPs).
  state.counters["FLOP/s"] = benchmark::Counter(3.0 * hw::layer_forward_flops(s),
                                                benchmark::Counter::kIsIterationInvariantRate);
}

void BM_ReferenceLayer(benchmark::State& state) {
  const hw::LayerShape s = shape_of(state);
  const hw::LayerTensors w = hw::init_layer(s, 1, 0, 0);
  hw::LayerTensors g = hw::zero_layer(s);
  const hw::Matrix x = hw::micro_batch_input(s, 1, 0);
  const hw::Matrix dy = hw::micro_batch_target(s, 1, 0);
  const hw::TpReduce none = [](hw::Matrix&) {};
  hw::LayerStash stash;
  for (auto _ : state) {
    hw::Matrix y = hw::layer_forward(w, s, x, stash, none);
    hw::Matrix dx = hw::layer_backward(w, s, stash, dy, g, none);
    benchmark::DoNotOptimize(y.data());
    benchmark::DoNotOptimize(dx.data());
  }
  set_counters(state, s);
}

void BM_DeviceLayerHost(benchmark::State& state) {
  const hw::LayerShape s = shape_of(state);
  hw::HostKernels k;
  const hw::DeviceLayerTensors w = hw::upload_layer(k, hw::init_layer(s, 1, 0, 0));
  hw::DeviceLayerTensors g = hw::zero_device_layer(k, s);
  const hw::Matrix x = hw::micro_batch_input(s, 1, 0);
  const hw::Matrix dy = hw::micro_batch_target(s, 1, 0);
  hw::DeviceBuffer act(k, static_cast<std::size_t>(x.size()));
  hw::DeviceBuffer grad(k, static_cast<std::size_t>(dy.size()));
  hw::DeviceStash stash(k, s);
  hw::DeviceWorkspace ws(k, s);
  const hw::DeviceTpComm none{[](float*, std::size_t) {}, {}, {}};
  for (auto _ : state) {
    // The inputs as the executor has them: x copied into its buffer, dy in place.
    k.upload(std::span<const float>(x.data(), act.size()), act.data());
    k.upload(std::span<const float>(dy.data(), grad.size()), grad.data());
    hw::device_layer_forward(k, w, s, act.data(), act.data(), stash, ws, none);
    hw::device_layer_backward(k, w, s, stash, grad.data(), grad.data(), g, ws, none);
    benchmark::DoNotOptimize(act.data());
    benchmark::DoNotOptimize(grad.data());
  }
  set_counters(state, s);
}

BENCHMARK(BM_ReferenceLayer)->Arg(256)->Arg(512)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DeviceLayerHost)->Arg(256)->Arg(512)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
