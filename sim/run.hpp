// A scenario's whole run on the simulator: iterations (or simulated
// duration) stepped through SimBackend, with the scenario's policy modules
// observing every StepReport and their directives applied between
// iterations — the same Controller that drives real hardware.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/directive.hpp"
#include "core/scenario/scenario.hpp"
#include "sim/iteration.hpp"

namespace parashift::sim {

class TraceRecorder;

struct TakenDirective {
  std::int64_t iteration = 0;  // applied before this iteration
  core::Directive directive;
};

struct DetectedStraggler {
  std::int64_t iteration = 0;  // first flagged after this iteration
  std::string what;            // "gpu 17 1.5x slower"
};

struct RunSummary {
  int iterations = 0;
  int simulated_iterations = 0;  // the rest reused an unchanged iteration
  TimeNs total_ns = 0;
  TimeNs healthy_iteration_ns = 0;  // the same plan without slowdown events
  double tokens = 0;                // trained over the run
  std::vector<TakenDirective> directives;
  std::vector<DetectedStraggler> stragglers;
  std::vector<std::string> policy_modules;  // enabled ones
  IterationResult last;

  double tokens_per_s() const { return tokens / core::ns_to_s(total_ns); }
  /// Wall time beyond what the same iterations take on a healthy cluster.
  TimeNs lost_ns() const { return total_ns - iterations * healthy_iteration_ns; }
};

/// Runs the scenario. `trace`, when set, records the first simulated iteration.
RunSummary run_scenario(const core::Scenario& scenario, TraceRecorder* trace = nullptr);

}  // namespace parashift::sim
