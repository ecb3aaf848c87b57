// The CUDA flavour's compute: one GPU, one stream, one cuBLAS handle. GEMMs
// run as cuBLAS GemmEx with BF16 operands and FP32 accumulation (tensor
// cores), timed with CUDA events on the stream. No CUDA type leaks out of
// this header, so the host code that uses it builds without the toolkit's
// headers; it exists only when PARASHIFT_HAVE_CUDA.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hw/calib/kernel_timer.hpp"
#include "hw/model/layer_ops.hpp"

namespace parashift::hw {

class CudaDevice {
 public:
  /// Selects `device` (cudaSetDevice) and creates its stream and cuBLAS handle.
  explicit CudaDevice(int device);
  ~CudaDevice();
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;

  std::string name() const;
  int index() const;
  /// One GEMM kernel `repeats` times after a warm-up; seconds from CUDA events.
  KernelTime time_gemm(const GemmOp& op, int repeats);
  /// Runs `ops` back to back on the stream (each op.count times) and returns
  /// the seconds between the events around them.
  double run_gemms_s(const std::vector<GemmOp>& ops);
  /// Device-to-device copy bandwidth (read + write bytes per second) over `bytes`.
  double copy_Bps(std::size_t bytes, int repeats);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace parashift::hw
