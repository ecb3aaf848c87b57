// A scenario's whole run on the simulator: iterations (or simulated
// duration) stepped through SimBackend by core::JobRunner, the one loop
// that also drives real hardware, with the scenario's policy modules
// observing every StepReport and their directives applied between
// iterations.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/controller/cost_calibration.hpp"
#include "core/controller/job_runner.hpp"
#include "core/directive.hpp"
#include "core/scenario/scenario.hpp"
#include "sim/iteration.hpp"
#include "sim/oracle.hpp"
#include "sim/sim_backend.hpp"

namespace parashift::sim {

class TraceRecorder;

using core::DetectedStraggler;
using core::TakenDirective;

/// Where a run under a convergence model (scenario `convergence:`) got.
struct ConvergenceResult {
  bool reached = false;       // the target: the run ended there
  double progress_steps = 0;  // steps at an infinite batch made
  double target_steps = 0;
};

struct RunSummary {
  int iterations = 0;
  int simulated_iterations = 0;  // the rest reused an unchanged iteration
  TimeNs total_ns = 0;
  TimeNs healthy_iteration_ns = 0;  // the same plan without slowdown events
  // Trained over the run and held by its final state (each iteration at its
  // plan's batch; work a restore rolled back and did not redo is not counted).
  double tokens = 0;
  std::vector<TakenDirective> directives;
  std::vector<DetectedStraggler> stragglers;
  std::vector<core::PolicyNote> notes;      // rules' knob changes, plugins' notes
  std::vector<std::string> policy_modules;  // enabled ones
  std::vector<core::FailureSeen> failures;  // in the order seen
  int restarts = 0;  // failures recovered from (snapshots on: JobRunner::set_recovery)
  int replayed = 0;  // of `iterations`, those run again after a restore
  std::vector<SnapshotCommit> snapshot_commits;         // replicated versions
  bool ended_on_failure = false;                        // the last failure ended the run
  std::optional<core::CalibrationSummary> calibration;  // module calibrate, when on
  IterationResult last;
  core::ParallelPlan final_plan;  // the plan of the last iteration (after any re-plan)
  bool batch_changed = false;  // some iteration ran another global batch: lost_ns() means nothing
  /// Module replan, when on: the planner's best for the cluster as it truly
  /// is at the last iteration, simulated there (sim/oracle.hpp).
  std::optional<OracleResult> oracle;
  std::optional<ConvergenceResult> convergence;  // scenario `convergence:`

  double tokens_per_s() const { return tokens / core::ns_to_s(total_ns); }
  /// Wall time beyond what the iterations trained take on a healthy
  /// cluster (a replayed iteration is time lost).
  TimeNs lost_ns() const { return total_ns - (iterations - replayed) * healthy_iteration_ns; }
};

/// Iterations done of those planned (a run by duration: of the healthy estimate).
using RunProgress = std::function<void(std::int64_t done, std::int64_t planned)>;

/// Runs the scenario. `trace`, when set, records the first simulated
/// iteration; `progress`, when set, is called after every iteration.
RunSummary run_scenario(const core::Scenario& scenario, TraceRecorder* trace = nullptr,
                        const RunProgress& progress = {});

}  // namespace parashift::sim
