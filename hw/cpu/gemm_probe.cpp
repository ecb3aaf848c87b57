#include "hw/cpu/gemm_probe.hpp"

#include <algorithm>
#include <chrono>
#include <limits>

#include <Eigen/Dense>

namespace parashift::hw {

GemmMeasurement measure_cpu_gemm(int m, int n, int k, int repeats) {
  // Deterministic inputs: A(i,j) = (i + 2j) mod 7 / 7, B(i,j) = (3i + j) mod 5 / 5.
  Eigen::MatrixXf a(m, k), b(k, n), c(m, n);
  for (int j = 0; j < k; ++j)
    for (int i = 0; i < m; ++i) a(i, j) = static_cast<float>((i + 2 * j) % 7) / 7.0f;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < k; ++i) b(i, j) = static_cast<float>((3 * i + j) % 5) / 5.0f;
  GemmMeasurement out{m, n, k, std::numeric_limits<double>::infinity(), 0, 0};
  for (int r = 0; r < std::max(1, repeats); ++r) {
    const auto start = std::chrono::steady_clock::now();
    c.noalias() = a * b;
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    out.seconds = std::min(out.seconds, took.count());
  }
  out.checksum = static_cast<double>(c.sum());
  out.flops_per_s = 2.0 * m * n * static_cast<double>(k) / out.seconds;
  return out;
}

}  // namespace parashift::hw
