// Calibration of the cost model against this machine: GEMM throughput by
// shape and all-reduce bus bandwidth by size (nccl-tests' factor 2(n-1)/n),
// measured on every rank of the job at once (as training loads it), written
// as a JSON device profile, and read back as a core::DeviceSpec.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/device_spec.hpp"
#include "hw/comm/communicator.hpp"

namespace parashift::hw {

struct GemmPoint {
  int m = 0, n = 0, k = 0;
  double flops_per_s = 0;  // slowest rank's best (median for executor kernels) of the repeats
  bool a_transposed = false, b_transposed = false;  // the executor's row-major operands
};

/// One of the executor's non-GEMM kernels (calib/executor_kernels.hpp), per
/// element it touches (per parameter for the optimizer).
struct KernelPoint {
  std::string kernel;
  double ns_per_element = 0;
};

struct CollectivePoint {
  double bytes = 0;  // per rank buffer
  double seconds = 0;
  double bus_Bps = 0;  // bytes / seconds x 2(n-1)/n
  /// Over which ranks: "job" (all of them), or a plan's "tp" / "dp" groups,
  /// every group of the kind at once, as training runs them.
  std::string group = "job";
};

struct CalibrationProfile {
  std::string device = "cpu-eigen-fp32";
  int ranks = 1;
  std::vector<GemmPoint> gemm;
  std::vector<CollectivePoint> all_reduce;  // empty on one rank
  double memory_Bps = 0;                    // streaming copy, per rank
  std::vector<KernelPoint> kernels;         // empty unless calibrated for a scenario
  /// Share of a core each rank got while calibrating the executor's kernels
  /// (set by measure_executor_kernels); the executor's kernels run 1 / cpu_share
  /// slower in wall time.
  double cpu_share = 1.0;
};

/// Collective over `world`. `quick` uses fewer shapes and repeats (tests).
/// Add the executor's own kernels with measure_executor_kernels().
CalibrationProfile measure_calibration(Communicator& world, bool quick);

nlohmann::json to_json(const CalibrationProfile& profile);
CalibrationProfile profile_from_json(const nlohmann::json& json, const std::string& where);

/// The measured rates as a DeviceSpec the cost model and simulator can use:
/// peak = fastest GEMM, efficiency.gemm_max = 1, gemm_half_dim fitted to the
/// small shapes (eff = d / (d + half)), hbm_Bps = memory_Bps, nvlink_Bps =
/// nic_Bps = best all-reduce bus bandwidth. Throws core::InputError naming
/// the file and field when the profile is unusable.
core::DeviceSpec device_from_profile(const CalibrationProfile& profile);
CalibrationProfile load_calibration(const std::filesystem::path& file);
core::DeviceSpec load_calibrated_device(const std::filesystem::path& file);

}  // namespace parashift::hw
