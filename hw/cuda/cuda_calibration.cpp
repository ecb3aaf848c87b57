#include "hw/cuda/cuda_calibration.hpp"

namespace parashift::hw {

CalibrationProfile measure_cuda_calibration(CudaDevice& device, const std::vector<GemmOp>& shapes,
                                            int repeats) {
  CalibrationProfile p;
  p.device = "cuda " + device.name() + " bf16";
  p.ranks = 1;
  std::vector<GemmOp> all;
  for (const int d : {1024, 2048, 4096, 8192}) all.push_back({d, d, d, false, false, 1});
  all.insert(all.end(), shapes.begin(), shapes.end());
  for (GemmOp op : all) {
    op.count = 1;
    const double s = device.time_gemm(op, repeats).median_s;
    p.gemm.push_back({op.m, op.n, op.k, op.flops() / s, op.a_transposed, op.b_transposed});
  }
  p.memory_Bps = device.copy_Bps(std::size_t{1} << 30, repeats);
  return p;
}

}  // namespace parashift::hw
