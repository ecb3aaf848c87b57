// The device layer and optimizer (hw/device/) on some kernels against the
// reference ones (hw/model/layer.cpp, optimizer.cpp), and the executor on
// those kernels against the executor on the CPU: the same weights and
// inputs both ways, the largest relative difference back. tests/hw/device_layer_test.cpp runs them
// on HostKernels in CI; tests/hw/cuda_conformance.cpp on CudaKernels when a GPU is there.
#pragma once

#include <algorithm>

#include "hw/comm/communicator.hpp"
#include "hw/device/device_kernels.hpp"
#include "hw/model/layer.hpp"
#include "hw/model/optimizer.hpp"

namespace parashift::test {

/// Largest |a - b| over the largest |b|.
double rel_diff(const hw::Matrix& a, const hw::Matrix& b);

struct LayerDiffs {
  double output = 0, probs = 0, dx = 0, grads = 0;
  double worst() const { return std::max({output, probs, dx, grads}); }
};

/// One tensor-parallel rank (`tp` its group; the layer's all-reduces go
/// through it, on host memory, so `kernels` must hold device data the host
/// can read when shape.tp > 1) runs forward and backward both ways. Weight
/// gradients start non-zero, so accumulation is compared too.
LayerDiffs compare_device_layer(hw::DeviceKernels& kernels, const hw::LayerShape& shape,
                                int tp_rank, hw::Communicator& tp);

/// Largest difference between init_layer's weights and init_device_layer's
/// (0 when the device makes the same bits), over tp ranks of `shape`.
double compare_device_init(hw::DeviceKernels& kernels, const hw::LayerShape& shape);

/// Three optimizer steps both ways (Adam's bias corrections for steps 1..3).
double compare_device_optimizer(hw::DeviceKernels& kernels, hw::OptimizerKind kind,
                                const hw::LayerShape& shape);

/// `iterations` losses of HwBackend on `kernels` with the data set resident
/// against HwBackend on its own host kernels, data made every micro-batch,
/// on the tiny model's one-rank plan (tests/hw/hw_test_model.hpp): the
/// largest relative gap.
double compare_device_executor(hw::DeviceKernels& kernels, hw::OptimizerKind kind, int iterations);

}  // namespace parashift::test
