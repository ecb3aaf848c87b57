// The simulate command's output: a human summary and the same as JSON.
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "core/scenario/scenario.hpp"
#include "sim/run.hpp"

namespace parashift::sim {

nlohmann::json summary_json(const core::Scenario& scenario, const RunSummary& run);
void print_summary(std::ostream& out, const core::Scenario& scenario, const RunSummary& run);
/// Two runs side by side: throughput, bubble, time lost to slowdowns, decisions.
void print_comparison(std::ostream& out, const std::string& label_a, const RunSummary& a,
                      const std::string& label_b, const RunSummary& b);

}  // namespace parashift::sim
