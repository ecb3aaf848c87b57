// Calibration of the CUDA flavour on one GPU: BF16 tensor-core GEMMs (cuBLAS,
// CUDA events) for large squares and, given a scenario, the shapes of the
// executor's GEMMs (which it runs in FP32 or TF32: this measures what BF16
// would give); device copy bandwidth. The same CalibrationProfile as the CPU
// flavour, so hw::predict and device_from_profile read it unchanged.
// Exists only when PARASHIFT_HAVE_CUDA.
#pragma once

#include <vector>

#include "hw/calib/calibration.hpp"
#include "hw/cuda/cuda_device.hpp"

namespace parashift::hw {

CalibrationProfile measure_cuda_calibration(CudaDevice& device, const std::vector<GemmOp>& shapes,
                                            int repeats);

}  // namespace parashift::hw
