// A GPU type: datasheet peaks and the few physically meaningful efficiency
// parameters the compute model uses.
#pragma once

#include <string>
#include <vector>

namespace parashift::core {

/// How close real kernels come to the datasheet peaks. Each share is a
/// fraction in (0, 1]; core/cost/compute_model.hpp shows where each is used.
/// They are per device type, never per run.
struct ComputeEfficiency {
  /// Best sustained share of the dense tensor-core peak on large BF16 GEMMs.
  double gemm_max = 0.80;
  /// Small-dimension fall-off: a GEMM whose smallest dimension is d runs at
  /// gemm_max * d / (d + gemm_half_dim) (before tile quantisation to 128).
  double gemm_half_dim = 128.0;
  /// Share of the BF16 peak reached by fused (flash) attention.
  double attention = 0.60;
  /// Share of the HBM bandwidth reached by element-wise kernels (norms,
  /// activations, residual adds, dropout, FP8 casts, optimizer).
  double memory = 0.80;
  /// Best sustained share of the dense FP8 peak on large FP8 GEMMs (unused
  /// when the device has no FP8 tensor cores).
  double fp8_gemm_max = 0.60;
  /// Sustained clock under the board power limit as a share of the boost
  /// clock the datasheet peaks assume. Scales tensor-core peaks, not HBM.
  double sustained_clock = 1.0;

  /// Every share in (0, 1] and gemm_half_dim >= 0; throws InputError otherwise.
  void validate(const std::string& device_name) const;
};

struct DeviceSpec {
  std::string name;
  double peak_bf16_flops_per_s = 0;  // dense, at boost clock
  double peak_fp8_flops_per_s = 0;   // dense; 0 when the device has no FP8 tensor cores
  double hbm_bytes = 0;
  double hbm_Bps = 0;
  double nvlink_Bps = 0;  // per GPU, one direction
  double nic_Bps = 0;     // per GPU (one NIC per GPU), one direction
  double power_w = 0;
  ComputeEfficiency efficiency;

  /// Peaks the kernels can sustain: datasheet x efficiency.sustained_clock.
  double sustained_bf16_flops_per_s() const {
    return peak_bf16_flops_per_s * efficiency.sustained_clock;
  }
  double sustained_fp8_flops_per_s() const {
    return peak_fp8_flops_per_s * efficiency.sustained_clock;
  }

  void validate() const;
};

/// Datasheet presets (a100-40gb, a100-80gb, h100-sxm-80gb, h100-96gb-500w, h200).
/// Throws InputError listing the known names when `name` is not one of them.
const DeviceSpec& device_preset(const std::string& name);
std::vector<std::string> device_preset_names();

}  // namespace parashift::core
