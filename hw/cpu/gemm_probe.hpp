// Measures dense GEMM throughput on the host CPU with Eigen: the CPU
// flavour's compute kernel, and the first calibration micro-benchmark.
#pragma once

namespace parashift::hw {

struct GemmMeasurement {
  int m = 0, n = 0, k = 0;
  double seconds = 0;      // best of the repeats
  double flops_per_s = 0;  // 2*m*n*k / seconds
  double checksum = 0;     // sum of C, so the work cannot be optimised away
};

/// Times C = A * B (float, m x k times k x n) `repeats` times, keeps the best.
GemmMeasurement measure_cpu_gemm(int m, int n, int k, int repeats);

}  // namespace parashift::hw
