// The simulate command's output: a human summary and the same as JSON.
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "core/scenario/scenario.hpp"
#include "sim/iteration.hpp"

namespace parashift::sim {

struct RunSummary {
  int iterations = 0;
  int simulated_iterations = 0;  // the rest reused an unchanged iteration
  TimeNs total_ns = 0;
  IterationResult last;
};

nlohmann::json summary_json(const core::Scenario& scenario, const RunSummary& run);
void print_summary(std::ostream& out, const core::Scenario& scenario, const RunSummary& run);

}  // namespace parashift::sim
