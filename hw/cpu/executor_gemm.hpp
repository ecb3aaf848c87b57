// Times one of the executor's GEMM kernels (hw/model/layer_ops.hpp) with the
// executor's matrix type (row-major fp32 Eigen) and operand transposition.
#pragma once

#include "hw/calib/kernel_timer.hpp"
#include "hw/model/layer_ops.hpp"

namespace parashift::hw {

KernelTime time_executor_gemm(const GemmOp& op, int repeats, KernelClock clock);

}  // namespace parashift::hw
