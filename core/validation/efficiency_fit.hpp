// The cost model's only tuned numbers, the per-GPU-generation efficiency
// shares of core/device_spec.hpp, fitted to published runs: coordinate
// descent over a grid inside each share's physically plausible range, then a
// finer pattern search, minimising the mean absolute percentage error of the
// iteration time.
// Nothing is fitted per row; a share no training row depends on keeps its
// prior (the middle of its range), so a held-out device is predicted from
// physics rather than from the rows it is judged on.
#pragma once

#include <string>
#include <vector>

#include "core/device_spec.hpp"
#include "core/validation/published_run.hpp"

namespace parashift::core {

/// One tuned share: which presets it applies to and its grid.
struct TunedParameter {
  const char* name;                  // "hopper.gemm_max"
  std::vector<std::string> devices;  // device presets that use it
  double ComputeEfficiency::*field;  // the share it sets
  double lo = 0, hi = 0, step = 0;   // the grid: lo, lo + step, ..., hi
  double prior() const { return 0.5 * (lo + hi); }
};
const std::vector<TunedParameter>& tuned_parameters();

/// A value for each tuned parameter (same order as tuned_parameters()).
struct EfficiencySet {
  std::vector<double> values;
  /// The preset `device` with these shares.
  DeviceSpec device(const std::string& device) const;
};
EfficiencySet prior_efficiencies();
/// The shares the presets ship with (core/device_spec.cpp).
EfficiencySet preset_efficiencies();

/// Fits the shares to `runs` starting from the priors; a parameter whose
/// devices no run uses keeps its prior. Deterministic.
EfficiencySet fit_efficiencies(const std::vector<PublishedRun>& runs);

/// Mean absolute percentage error of `runs` under `set`.
double mape_pct(const std::vector<PublishedRun>& runs, const EfficiencySet& set);

}  // namespace parashift::core
