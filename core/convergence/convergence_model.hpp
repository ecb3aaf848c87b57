// A convergence model for a simulated run (scenario `convergence:`), so the
// batch-size policy can be tried offline: training needs `target_steps`
// steps at an infinite batch to reach its target loss (S_min), and the
// gradient noise scale follows a trace against the share of that progress
// made (a CSV of `progress,noise_scale_tokens`, linear between rows). Each
// step at batch B makes B / (B + B_noise) of a step's progress
// (core/convergence/noise_scale.hpp). The simulator reports the squared
// gradient norms a data-parallel job would measure, with seeded noise; the
// policy never reads the trace.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace parashift::core {

class YamlFields;

struct NoiseScaleTrace {
  std::vector<double> progress;            // share of target_steps, ascending from 0 to 1
  std::vector<double> noise_scale_tokens;  // B_noise there
  std::string file;                        // as written, for messages
  /// B_noise at progress share `share` (clamped to [0, 1]), linear between rows.
  double at(double share) const;
};

struct ConvergenceSpec {
  double target_steps = 0;          // S_min to the target loss
  NoiseScaleTrace trace;            // B_noise against the share of progress
  double measurement_noise = 0.05;  // relative sd of each measured squared norm
};

/// Reads the `convergence:` section; the trace path is relative to `dir`.
/// A malformed trace row is one InputError naming the file, line and column.
ConvergenceSpec read_convergence(YamlFields& fields, const std::filesystem::path& dir);

/// Reads a trace CSV (header `progress,noise_scale_tokens`).
NoiseScaleTrace read_noise_scale_trace(const std::filesystem::path& file, const std::string& shown);

/// The squared gradient norms one step measures in the model's units
/// (|G|^2 = 1, tr(Sigma) = B_noise): each replica's at `replica_batch`
/// (their mean over `replicas`) and the all-reduced one at `global_batch`,
/// each times (1 + noise x a standard normal draw seeded by (seed, step)).
struct MeasuredNorms {
  double replica_sq_norm = 0;
  double global_sq_norm = 0;
};
MeasuredNorms measured_norms(double noise_scale, int replica_batch, int replicas, int global_batch,
                             double noise, std::uint64_t seed, std::int64_t step);

}  // namespace parashift::core
