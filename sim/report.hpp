// The simulate command's output: a human summary and the same as JSON.
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "core/scenario/scenario.hpp"
#include "sim/run.hpp"

namespace parashift::sim {

/// The memory of the run's last iteration against the HBM of the GPUs that
/// hold it: the device's, or with device groups each worker's own group's
/// (the worker with the least room is the one returned).
struct MemoryFit {
  double peak_bytes = 0;
  double hbm_bytes = 0;
  bool fits() const { return peak_bytes <= hbm_bytes; }
};
MemoryFit memory_fit(const core::Scenario& scenario, const RunSummary& run);

nlohmann::json summary_json(const core::Scenario& scenario, const RunSummary& run);
void print_summary(std::ostream& out, const core::Scenario& scenario, const RunSummary& run);
/// Two runs side by side: throughput, bubble, time lost to slowdowns, decisions.
void print_comparison(std::ostream& out, const std::string& label_a, const RunSummary& a,
                      const std::string& label_b, const RunSummary& b);

}  // namespace parashift::sim
