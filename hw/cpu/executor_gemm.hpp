// Times one of the executor's GEMM kernels (hw/model/layer_ops.hpp) as the
// CPU executor runs it: HostKernels::gemm (hw/device/host_kernels.hpp) on
// row-major fp32 buffers with the op's operand transposition.
#pragma once

#include "hw/calib/kernel_timer.hpp"
#include "hw/device/host_kernels.hpp"
#include "hw/model/layer_ops.hpp"

namespace parashift::hw {

/// One GEMM of the op list with its operands allocated once, stored as the
/// executor stores them (op(A) = A^T means A is k x m); run() computes it once.
class ExecutorGemm {
 public:
  explicit ExecutorGemm(const GemmOp& op);
  void run();
  /// A value of the products, so that the compiler keeps them.
  float sink() const { return sink_; }

 private:
  HostKernels kernels_;
  DeviceBuffer a_, b_, c_;
  GemmCall call_;
  float sink_ = 0;
};

KernelTime time_executor_gemm(const GemmOp& op, int repeats, KernelClock clock);

}  // namespace parashift::hw
