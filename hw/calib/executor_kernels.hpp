// Calibration of the executor's own kernels for one layer shape: every
// distinct GEMM of its op list (hw/model/layer_ops.hpp) with the executor's
// operand layout, the element-wise kernels of hw/model/pointwise.hpp per
// element, the optimizer step per parameter, synthetic data and the loss per
// element. Medians of the repeats in thread CPU time (the cost on a core; the
// share of a core a rank gets is CalibrationProfile::cpu_share), slowest
// rank, all ranks at once as training loads them.
#pragma once

#include <string>

#include "hw/calib/calibration.hpp"
#include "hw/model/layer.hpp"
#include "hw/model/optimizer.hpp"

namespace parashift::hw {

/// Kernel names in CalibrationProfile::kernels besides PointwiseKind's.
inline constexpr const char* kAdamKernel = "adam_update";         // per parameter
inline constexpr const char* kSgdKernel = "sgd_update";           // per parameter
inline constexpr const char* kDataKernel = "synthetic_data";      // per element of x0 or target
inline constexpr const char* kLossKernel = "squared_error_loss";  // per element of y

/// Collective over `world`; adds GEMM points (replacing equal kernels) and
/// kernel points to `profile`.
void measure_executor_kernels(Communicator& world, const LayerShape& shape, int repeats,
                              CalibrationProfile& profile);

/// Collective: the share of a core each rank gets while every rank computes
/// (thread CPU time / wall time over `window_s` of GEMMs; the smallest over
/// the ranks): 1 on an idle machine with a core per rank, below 1 when other
/// work shares the cores. Stored as CalibrationProfile::cpu_share.
double measure_cpu_share(Communicator& world, const LayerShape& shape, double window_s);

/// The kernel's ns per element; throws core::InputError naming the kernel
/// when the profile was not calibrated for the executor.
double kernel_ns_per_element(const CalibrationProfile& profile, const std::string& kernel);

}  // namespace parashift::hw
