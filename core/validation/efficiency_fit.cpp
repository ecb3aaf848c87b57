#include "core/validation/efficiency_fit.hpp"

#include <algorithm>
#include <cmath>

#include "core/validation/validation_report.hpp"

namespace parashift::core {

namespace {

bool uses(const TunedParameter& p, const std::string& device) {
  return std::find(p.devices.begin(), p.devices.end(), device) != p.devices.end();
}

// Runs that depend on parameter `p`, as indices into `runs`.
std::vector<std::size_t> affected(const TunedParameter& p, const std::vector<PublishedRun>& runs) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (uses(p, runs[i].device)) out.push_back(i);
  }
  return out;
}

double abs_error_sum(const std::vector<PublishedRun>& runs, const std::vector<std::size_t>& which,
                     const EfficiencySet& set) {
  double sum = 0;
  for (std::size_t i : which) {
    sum += std::fabs(predict_run(runs[i], set.device(runs[i].device)).error_pct);
  }
  return sum;
}

}  // namespace

const std::vector<TunedParameter>& tuned_parameters() {
  // Ranges: what the kernels reach on these parts in published profiles
  // (cuBLAS BF16 GEMMs 60-90% of the dense peak; FlashAttention-2/3 forward
  // 30-75%; element-wise kernels 50-95% of HBM bandwidth; FP8 GEMMs 40-80%
  // of their peak), and for the 500 W H100 the clock that 5/7 of the power
  // sustains, (5/7)^(1/2..1) = 0.71..0.85, widened to 0.65..0.95.
  using E = ComputeEfficiency;
  const std::vector<std::string> ampere = {"a100-40gb", "a100-80gb"};
  const std::vector<std::string> hopper = {"h100-sxm-80gb", "h100-96gb-500w", "h200"};
  static const std::vector<TunedParameter> table = {
      {"ampere.gemm_max", ampere, &E::gemm_max, 0.55, 0.90, 0.01},
      {"ampere.gemm_half_dim", ampere, &E::gemm_half_dim, 32, 512, 32},
      {"ampere.attention", ampere, &E::attention, 0.30, 0.80, 0.02},
      {"ampere.memory", ampere, &E::memory, 0.50, 0.95, 0.025},
      {"hopper.gemm_max", hopper, &E::gemm_max, 0.50, 0.90, 0.01},
      {"hopper.gemm_half_dim", hopper, &E::gemm_half_dim, 32, 512, 32},
      {"hopper.attention", hopper, &E::attention, 0.30, 0.80, 0.02},
      {"hopper.memory", hopper, &E::memory, 0.50, 0.95, 0.025},
      {"hopper.fp8_gemm_max", hopper, &E::fp8_gemm_max, 0.40, 0.80, 0.01},
      {"h100-500w.sustained_clock", {"h100-96gb-500w"}, &E::sustained_clock, 0.65, 0.95, 0.01},
  };
  return table;
}

DeviceSpec EfficiencySet::device(const std::string& name) const {
  DeviceSpec d = device_preset(name);
  const auto& params = tuned_parameters();
  for (std::size_t i = 0; i < params.size() && i < values.size(); ++i) {
    if (uses(params[i], name)) d.efficiency.*params[i].field = values[i];
  }
  return d;
}

EfficiencySet prior_efficiencies() {
  EfficiencySet set;
  for (const auto& p : tuned_parameters()) set.values.push_back(p.prior());
  return set;
}

EfficiencySet preset_efficiencies() {
  EfficiencySet set;
  for (const auto& p : tuned_parameters()) {
    set.values.push_back(device_preset(p.devices.front()).efficiency.*p.field);
  }
  return set;
}

double mape_pct(const std::vector<PublishedRun>& runs, const EfficiencySet& set) {
  if (runs.empty()) return 0.0;
  std::vector<std::size_t> all(runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i) all[i] = i;
  return abs_error_sum(runs, all, set) / static_cast<double>(runs.size());
}

EfficiencySet fit_efficiencies(const std::vector<PublishedRun>& runs) {
  EfficiencySet set = prior_efficiencies();
  const auto& params = tuned_parameters();
  std::vector<std::vector<std::size_t>> rows(params.size());
  for (std::size_t i = 0; i < params.size(); ++i) rows[i] = affected(params[i], runs);
  // Two sweeps of coordinate descent over each share's whole grid (with the
  // others fixed), then a pattern search around the result with the grid
  // step halved three times, so the shares need not lie on the grid.
  auto try_value = [&](std::size_t i, double value, double& best) {
    const double kept = set.values[i];
    set.values[i] = std::clamp(value, params[i].lo, params[i].hi);
    const double err = abs_error_sum(runs, rows[i], set);
    if (err < best - 1e-9) {
      best = err;
      return true;
    }
    set.values[i] = kept;
    return false;
  };
  for (int sweep = 0; sweep < 2; ++sweep) {
    for (std::size_t i = 0; i < params.size(); ++i) {
      if (rows[i].empty()) continue;
      const TunedParameter& p = params[i];
      double best = abs_error_sum(runs, rows[i], set);
      const int steps = static_cast<int>(std::lround((p.hi - p.lo) / p.step));
      for (int k = 0; k <= steps; ++k) try_value(i, p.lo + k * p.step, best);
    }
  }
  constexpr int kMaxRounds = 50;
  for (double scale : {1.0, 0.5, 0.25, 0.125}) {
    for (int round = 0; round < kMaxRounds; ++round) {
      bool improved = false;
      for (std::size_t i = 0; i < params.size(); ++i) {
        if (rows[i].empty()) continue;
        double best = abs_error_sum(runs, rows[i], set);
        const double step = scale * params[i].step;
        const double at = set.values[i];
        improved = try_value(i, at + step, best) || try_value(i, at - step, best) || improved;
      }
      if (!improved) break;
    }
  }
  return set;
}

}  // namespace parashift::core
