// Calibration of a device's kernels (device_kernels.hpp) for one layer
// shape, as the device layer calls them: every GEMM of the layer's op list
// (hw/model/layer_ops.hpp; the per-head attention GEMMs timed as the one
// call batched over the rank's heads that the device layer makes, per GEMM),
// the element-wise kernels per element, the optimizer per parameter, the
// loss per element and a device copy's bandwidth. The result is the same
// CalibrationProfile the CPU flavour writes, so hw::predict_iteration
// predicts the executor's iteration on these kernels from it. Kernels are
// timed in passes (each pass runs every kernel once), wall time around each
// call with the device synchronized before and after: on a GPU that
// includes the launch, as the executor pays it.
#pragma once

#include "hw/calib/calibration.hpp"
#include "hw/device/device_kernels.hpp"
#include "hw/model/layer.hpp"
#include "hw/model/layer_ops.hpp"

namespace parashift::hw {

/// `batch` GEMMs of `op`'s shape and transposition on packed operands (each
/// matrix right after the previous one's), as the calibrations time them.
GemmCall packed_gemm(const GemmOp& op, const float* a, const float* b, float* c, int batch = 1);

/// Each kernel's median of `repeats` timed calls after one warm-up call.
CalibrationProfile calibrate_device_kernels(DeviceKernels& kernels, const LayerShape& shape,
                                            int repeats);

}  // namespace parashift::hw
