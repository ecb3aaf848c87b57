#include "core/cost/compute_model.hpp"

#include <algorithm>
#include <cmath>

namespace parashift::core {

namespace {

constexpr double kTile = 128.0;

double tile_share(double x) {
  return x / (std::ceil(x / kTile) * kTile);
}

}  // namespace

ComputeRates compute_rates(const DeviceSpec& device) {
  const ComputeEfficiency& e = device.efficiency;
  ComputeRates r;
  r.gemm_flops_per_s = device.sustained_bf16_flops_per_s() * e.gemm_max;
  r.fp8_gemm_flops_per_s = device.sustained_fp8_flops_per_s() * e.fp8_gemm_max;
  r.attention_flops_per_s = device.sustained_bf16_flops_per_s() * e.attention;
  r.memory_Bps = device.hbm_Bps * e.memory;
  r.gemm_half_dim = e.gemm_half_dim;
  return r;
}

double gemm_shape_efficiency(double m, double n, double k, double half_dim) {
  const double smallest = std::min({m, n, k});
  return tile_share(m) * tile_share(n) * tile_share(k) * smallest / (smallest + half_dim);
}

double gemm_s(const ComputeRates& rates, double m, double n, double k, Precision precision) {
  const double flops = 2.0 * m * n * k;
  const double shape = gemm_shape_efficiency(m, n, k, rates.gemm_half_dim);
  if (precision == Precision::Fp8 && rates.fp8_gemm_flops_per_s > 0) {
    // The weight is cast from BF16 (read 2 B, write 1 B per element); the
    // activation cast is fused into the kernel producing it, which only
    // writes the extra 1-byte transposed copy the weight-gradient GEMM needs.
    const double cast_bytes = 3.0 * k * n + 1.0 * m * k;
    return flops / (rates.fp8_gemm_flops_per_s * shape) + memory_s(rates, cast_bytes);
  }
  return flops / (rates.gemm_flops_per_s * shape);
}

}  // namespace parashift::core
