// The compute model: how long one kernel class takes on one GPU, from the
// device's datasheet peaks and its ComputeEfficiency shares.
//
//   GEMM (M x K) * (K x N):   2MNK / (peak x gemm_max x q(M) q(N) q(K) x d/(d + d_half))
//       q(x) = x / roundup(x, 128) is tile quantisation, d = min(M, N, K) the
//       small-dimension fall-off (thin GEMMs cannot fill the SMs).
//   FP8 GEMM: the same at the FP8 peak x fp8_gemm_max, plus at HBM speed the
//       weight cast (3 B per element) and the activation's extra FP8 copy (1 B).
//   Fused attention: FLOPs / (peak x attention).
//   Element-wise: bytes / (HBM bandwidth x memory).
// peak = datasheet x sustained_clock (power-capped parts run slower clocks).
#pragma once

#include "core/device_spec.hpp"
#include "core/parallel_plan.hpp"

namespace parashift::core {

/// Rates of one device, computed once per work profile.
struct ComputeRates {
  double gemm_flops_per_s = 0;      // BF16 peak x gemm_max
  double fp8_gemm_flops_per_s = 0;  // FP8 peak x fp8_gemm_max (0: no FP8)
  double attention_flops_per_s = 0;
  double memory_Bps = 0;
  double gemm_half_dim = 0;
};

ComputeRates compute_rates(const DeviceSpec& device);

/// Shape share in (0, 1]: tile quantisation x small-dimension fall-off.
double gemm_shape_efficiency(double m, double n, double k, double half_dim);

/// Seconds of one GEMM of 2*m*n*k FLOPs; FP8 includes its input casts.
double gemm_s(const ComputeRates& rates, double m, double n, double k, Precision precision);

/// Seconds of memory-bound work moving `bytes` through HBM.
inline double memory_s(const ComputeRates& rates, double bytes) {
  return bytes / rates.memory_Bps;
}

}  // namespace parashift::core
