// Calibration of the executor's own kernels for one layer shape: every
// distinct GEMM of its op list (hw/model/layer_ops.hpp) with the executor's
// operand layout, the element-wise kernels of hw/model/pointwise.hpp per
// element, the optimizer step per parameter, synthetic data and the loss per
// element. `repeats` passes over all the kernels (one run of each per pass,
// after a warm-up pass), so that every kernel is sampled across the whole
// calibration rather than in one burst; each kernel's median over the passes
// in thread CPU time (the cost on a core; the share of a core a rank gets is
// CalibrationProfile::cpu_share), slowest rank, all ranks at once as training
// loads them.
#pragma once

#include <memory>
#include <string>

#include "hw/calib/calibration.hpp"
#include "hw/model/layer.hpp"
#include "hw/model/optimizer.hpp"

namespace parashift::hw {

/// Kernel names in CalibrationProfile::kernels besides PointwiseKind's.
inline constexpr const char* kAdamKernel = "adam_update";         // per parameter
inline constexpr const char* kSgdKernel = "sgd_update";           // per parameter
inline constexpr const char* kDataKernel = "synthetic_data";      // per element of x0 or target
inline constexpr const char* kLossKernel = "squared_error_loss";  // per element of y

/// The same measurement in parts, for callers that interleave it with other
/// work (tests/hw/predict_check.cpp alternates passes with iterations, so that
/// the kernels and the iterations see the same machine). Collective calls.
class ExecutorKernelBench {
 public:
  explicit ExecutorKernelBench(const LayerShape& shape);
  ~ExecutorKernelBench();
  ExecutorKernelBench(const ExecutorKernelBench&) = delete;
  ExecutorKernelBench& operator=(const ExecutorKernelBench&) = delete;
  /// `passes` more timed passes over every kernel (the first call adds a warm-up pass).
  void run_passes(Communicator& world, int passes);
  /// Each kernel's median over all the passes so far (slowest rank) into
  /// `profile`, and its cpu_share over those passes (smallest rank).
  void write(Communicator& world, CalibrationProfile& profile) const;
  /// Forgets the passes so far (the next write() covers only later ones).
  void clear();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Collective over `world`; adds GEMM points (replacing equal kernels) and
/// kernel points to `profile`, and sets its cpu_share to the share of a core
/// the ranks got over the calibration (thread CPU time / wall time, smallest rank).
void measure_executor_kernels(Communicator& world, const LayerShape& shape, int repeats,
                              CalibrationProfile& profile);

/// Collective: the share of a core each rank gets while every rank computes
/// (thread CPU time / wall time over `window_s` of GEMMs; the smallest over
/// the ranks): 1 on an idle machine with a core per rank, below 1 when other
/// work shares the cores. Stored as CalibrationProfile::cpu_share.
double measure_cpu_share(Communicator& world, const LayerShape& shape, double window_s);

/// The kernel's ns per element; throws core::InputError naming the kernel
/// when the profile was not calibrated for the executor.
double kernel_ns_per_element(const CalibrationProfile& profile, const std::string& kernel);

}  // namespace parashift::hw
