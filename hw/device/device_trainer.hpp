// One rank's whole training iteration on a device (device_kernels.hpp), for
// plans of one rank (tp = pp = dp = cp = 1): every layer's weights,
// gradients and optimizer moments stay in device memory, and so does the
// synthetic data set (each micro-batch's input and target, the same every
// iteration: hw/model/synthetic_data.hpp), uploaded once. Each micro-batch
// runs forward through the layers, the squared-error loss and its gradient
// are a device kernel, backward runs back through them; the optimizer
// steps on the device. Only each micro-batch's loss (one double) comes back. The same data, initial
// weights and loss as HwBackend, so on HostKernels the losses equal the CPU executor's
// (tests/hw/device_layer_test.cpp), and on CudaKernels it is the CUDA
// flavour's 1-GPU iteration (tools/gpu_check.sh).
#pragma once

#include <cstdint>
#include <vector>

#include "core/model_spec.hpp"
#include "core/parallel_plan.hpp"
#include "hw/device/device_layer.hpp"

namespace parashift::hw {

/// Throws core::InputError unless `plan` is one rank (tp = pp = dp = cp = 1).
void check_one_rank_plan(const core::ParallelPlan& plan);

class DeviceTrainer {
 public:
  /// Throws core::InputError unless the plan is one rank (tp = pp = dp = cp = 1).
  DeviceTrainer(DeviceKernels& kernels, const core::ModelSpec& model, int seq_len,
                std::uint64_t seed, const core::ParallelPlan& plan, OptimizerConfig optimizer);

  /// One iteration; returns its loss (mean over micro-batches). Waits for the device.
  double step();
  std::int64_t iterations_done() const { return iteration_; }
  const LayerShape& shape() const { return shape_; }
  /// Layer `layer`'s weights, downloaded.
  LayerTensors weights(int layer) const;
  /// Device memory held: weights, gradients, moments, stash and scratch.
  std::size_t device_bytes() const;

 private:
  struct Layer {
    DeviceLayerTensors weights, grads;
    DeviceOptimizerState state;
    DeviceStash stash;
  };
  DeviceKernels& kernels_;
  LayerShape shape_;
  int micro_batches_;
  OptimizerConfig optimizer_;
  std::vector<Layer> layers_;
  DeviceWorkspace workspace_;
  std::vector<DeviceBuffer> inputs_, targets_;  // per micro-batch, tokens x hidden
  DeviceBuffer activation_;                     // the running x, then dy
  std::int64_t iteration_ = 0;
};

}  // namespace parashift::hw
