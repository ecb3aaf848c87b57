// A training job on the hw executor from start to end, driven by the one
// loop (core::JobRunner): optionally restore the newest snapshot every rank
// can reach, then run iterations under the scenario's policy (its enabled
// modules decide on every rank from the same gathered report, so every
// rank applies the same directives) and faults (faults.snapshot.every;
// faults.events: kill events for this rank, slow events as this rank's
// compute slowdown), with scheduled repartitions. What `parashift run
// --backend hw|cuda` does on each rank.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "core/backend.hpp"
#include "core/controller/job_runner.hpp"
#include "core/scenario/scenario.hpp"
#include "hw/comm/virtual_time.hpp"
#include "hw/exec/hw_backend.hpp"

namespace parashift::hw {

struct ScheduledRepartition {
  int before_iteration = 0;
  std::vector<int> layers_per_stage;
};

struct ScheduledReplan {
  int before_iteration = 0;
  core::ParallelPlan plan;
};

struct TrainingRunConfig {
  int iterations = 1;  // the job ends after this many iterations in total
  HwOptions options;
  bool restore = false;         // start from the newest restorable snapshot, if any
  bool keep_snapshots = false;  // leave the job's shards in shared memory at the end
  std::vector<ScheduledRepartition> repartitions;
  std::vector<ScheduledReplan> replans;  // live re-plans (HwBackend::replan)
  /// The policy's cost model when it is not the scenario's GPU preset (the
  /// CPU executor's, from a calibration profile: executor_cost_inputs).
  std::optional<core::CostInputs> policy_cost;
};

struct IterationRecord {
  double loss = 0;
  core::StepReport report;
};

struct TrainingRunResult {
  std::vector<IterationRecord> iterations;
  std::optional<RestoreStats> restored;  // when a snapshot was restored
  bool nothing_to_restore = false;       // restore asked, no version every rank can reach
  std::vector<long long> snapshots;      // versions written
  std::vector<int> final_layers_per_stage;
  core::ParallelPlan final_plan;                 // the scenario's, or the last re-plan's
  std::vector<core::TakenDirective> directives;  // scheduled and decided, in order
  std::vector<core::DetectedStraggler> stragglers;
  std::vector<core::PolicyNote> notes;                  // rules' knob changes, plugins' notes
  std::vector<core::FailureSeen> failures;              // the run ended at the first
  std::optional<core::CalibrationSummary> calibration;  // when `calibrate` ran
  /// The batch module's gradient noise scale (sequences) from the run's
  /// gradients, and how many iterations it rests on; when `batch` ran.
  std::optional<double> noise_scale;
  std::int64_t noise_observations = 0;
  /// The controller's wall time after each iteration on this rank (empty
  /// without a policy).
  std::vector<core::TimeNs> controller_wall_ns;
};

/// This rank's compute slowdown from the scenario's slow events (gpu = rank).
/// The executor runs them for the whole run: an event with a start (`at`) or
/// a `duration` is an InputError naming it, as is any event other than slow
/// and kill (fail, background, tenant, jitter: the simulator's; degrade
/// only with `at_ns`, on the virtual link: virtual_degrades), and
/// so is `faults.spares` (the executor's spares are --elastic --spares nodes).
/// With `at_ns` (the job's virtual time, --clock virtual) events may have
/// a start and a duration: the factor is that of the events holding at
/// `at_ns`.
double scenario_slowdown(const core::Scenario& scenario, int rank,
                         std::optional<core::TimeNs> at_ns = std::nullopt);

/// The scenario's degrade events as spans of the virtual links' rates
/// (--clock virtual): a degrade with a scope cuts every rank-to-rank link,
/// one naming a link "r<from>->r<to>" (two of the plan's ranks) that link
/// alone. Any other link name is an InputError naming the event.
std::vector<VirtualDegrade> virtual_degrades(const core::Scenario& scenario);

/// Collective over `world`. `on_iteration` (may be empty) is called on every
/// rank after each iteration.
TrainingRunResult run_training(const core::Scenario& scenario, const TrainingRunConfig& config,
                               Communicator& world,
                               const std::function<void(const IterationRecord&)>& on_iteration);

}  // namespace parashift::hw
