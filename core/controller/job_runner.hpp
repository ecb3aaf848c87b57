// The one loop of every run: step -> observe -> decide -> apply over a
// core::Backend. `simulate`, `run --backend sim|hw|cuda` and the contract
// tests drive their backend through a JobRunner; no backend has a loop or a
// policy of its own.
//
// Before each iteration the runner applies what the scenario schedules
// (snapshots every `snapshot_every` iterations, directives given with
// schedule()); then the backend steps the current plan; the report's typed
// failures are recorded (a failure ends the run, unless set_recovery: see
// there); the Controller, when the scenario enables policy modules,
// observes the report and its directives are applied and logged with the
// iteration they precede. New stragglers are logged once, when first named.
//
//   core::JobRunner runner(backend, plan);
//   runner.set_controller(core::Controller(job, scenario.policy, backend.capabilities()));
//   while (runner.iterations() < n && runner.step()) {}
//   for (const auto& t : runner.directives()) std::cout << to_string(t.directive) << '\n';
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "core/controller/controller.hpp"
#include "core/cost/cost_inputs.hpp"
#include "core/planner/planner.hpp"
#include "core/snapshot/shrink.hpp"

namespace parashift::core {

struct Scenario;

/// Who gave a directive: the scenario's schedule (snapshots, --replan), a
/// policy module, or recovery from a failure (set_recovery).
enum class DirectiveSource { Scheduled, Decided, Recovery };

/// A directive and the iteration it was applied before.
struct TakenDirective {
  std::int64_t iteration = 0;
  Directive directive;
  double cost_s = 0;  // of making the change, as the deciding module priced it (scheduled: 0)
  DirectiveSource source = DirectiveSource::Scheduled;
};

/// A straggler as first named, after iteration `iteration`.
struct DetectedStraggler {
  std::int64_t iteration = 0;
  std::string what;  // "gpu 17 1.5x slower"
};

/// A decision that is no directive and no straggler: a rule's knob changes,
/// a plugin's note; it takes effect from iteration `iteration`.
struct PolicyNote {
  std::int64_t iteration = 0;
  std::string module;   // "rules", or a plugin's name
  std::string message;  // "policy.rules[0] (...): balance.min_gain_s 60 -> 10"
};

/// The enabled modules of `policy`, by name, in registration order.
std::vector<std::string> enabled_modules(const PolicyConfig& policy);

class JobRunner {
 public:
  /// `backend` is not owned and must outlive the runner.
  JobRunner(Backend& backend, ParallelPlan plan);

  /// The policy that observes every report (none: the iterations just run).
  void set_controller(Controller controller);
  /// The scenario's policy (its enabled modules; none: no controller) over
  /// the runner's plan, for a run of `total_iterations` (the horizon of
  /// every gain "over the remaining run").
  void set_policy(const Scenario& scenario, std::int64_t total_iterations);
  /// The same with the policy's cost model given: a backend whose kernels
  /// are not the presets' (the CPU executor from its calibration profile).
  void set_policy(const Scenario& scenario, std::int64_t total_iterations, CostInputs cost);
  /// The scenario's faults section: checks its targets against the job
  /// (check_fault_targets with Capabilities::ranks and the cluster's GPUs)
  /// and schedules faults.snapshot.every; with snapshots on, failures are
  /// recovered (set_recovery, up to faults.max_restarts times, default no
  /// limit) and the job may shrink (set_shrink with the scenario's planner
  /// input).
  void set_faults(const Scenario& scenario);
  /// A snapshot directive (version = the iteration) before iterations k, 2k, ...;
  /// 0: none. Throws InputError when the backend cannot take snapshots
  /// (Capabilities::snapshots_to_host); `field` names the setting.
  void set_snapshot_every(int every, const std::string& field);
  /// Applies `directive` before iteration `before_iteration` (scheduled, not decided).
  void schedule(std::int64_t before_iteration, Directive directive);
  /// The iteration the next step() runs (after a restore: the restored one).
  void set_next_iteration(std::int64_t iteration);
  /// Recovery from lost ranks, up to `max_restarts` times. A rank is lost
  /// when its process is killed (failure kind "kill", component "rank R")
  /// or its GPU fails (kind "fail", component "gpu G": the rank on G, from
  /// Capabilities::gpu_of_rank) or is drained with a failed GPU's host
  /// (kind "drain", as a failed one). Each lost rank moves onto the nearest spare
  /// GPU the backend offers (core::remap_to_spares over
  /// Capabilities::spare_gpus). With none left, a killed rank restarts where
  /// it was, and a rank whose GPU failed makes the job shrink (set_shrink).
  /// Then the newest snapshot is restored and the run goes on from its
  /// iteration, the iterations since run again. A failed GPU no rank runs
  /// on (a spare) only leaves the pool. After a shrink, once enough GPUs
  /// are free again (the backend repaired them: faults.repair), the
  /// dropped replicas come back before the next iteration
  /// (core::regrow_plan, a ReplanDirective; each replica's batch kept).
  /// With no smaller plan the stranded ranks stay and the job waits for
  /// their GPUs' repair (Capabilities::back_at_ns) where the backend
  /// repairs them. Without a snapshot taken, past `max_restarts`, for
  /// another failure, or with no smaller plan and no repair coming, the
  /// failure ends the run.
  void set_recovery(int max_restarts);
  /// How the job shrinks when a GPU fails and no spare is left: the
  /// data-parallel replicas that held its ranks are dropped and the plan is
  /// searched again on the GPUs left (core::shrink_and_replan over `base`,
  /// tp, pp and cp kept, each replica's batch kept), applied as a
  /// ReplanDirective before the restore.
  void set_shrink(PlannerInput base);
  /// The same with the shrink's choice given: the plan on the GPUs left
  /// for `current` without the replicas of `stranded_ranks` (none: the run
  /// ends). Tests and harnesses whose job is no model the planner knows.
  using ShrinkChoice = std::function<std::optional<ShrinkResult>(
      const ParallelPlan& current, const std::vector<int>& stranded_ranks)>;
  void set_shrink(ShrinkChoice choose);

  /// One iteration: scheduled directives, backend.step, observe, apply.
  /// Returns false when the report carried failures it did not recover
  /// from (the run ends there).
  bool step();
  /// step() in parts, for a driver that runs the backend's iteration itself
  /// (a shared cluster's jobs): the scheduled directives before the next
  /// iteration, then record() its report.
  void begin_iteration();
  /// The same for a report the backend already produced for the next iteration.
  bool record(StepReport report);

  /// The plan the next iteration runs (the policy's, after a re-plan).
  const ParallelPlan& plan() const;
  std::int64_t iterations() const { return completed_; }
  int restarts() const { return restarts_; }
  std::int64_t next_iteration() const { return next_; }
  TimeNs total_ns() const { return total_ns_; }
  const std::optional<StepReport>& last_report() const { return last_; }
  const std::vector<TakenDirective>& directives() const { return taken_; }
  const std::vector<DetectedStraggler>& stragglers() const { return stragglers_; }
  const std::vector<PolicyNote>& notes() const { return notes_; }
  const std::vector<FailureSeen>& failures() const { return failures_; }
  const Controller* controller() const { return controller_ ? &*controller_ : nullptr; }
  /// The controller's own wall time deciding after each iteration (steady
  /// clock; one entry per observed report). Machine-dependent: the
  /// executor prints it, the simulator's deterministic output does not.
  const std::vector<TimeNs>& controller_wall_ns() const { return controller_wall_ns_; }

 private:
  void apply(std::int64_t iteration, const Directive& directive, double cost_s,
             DirectiveSource source);
  /// set_recovery's decision for `failures`; false: not recoverable.
  bool recover(const std::vector<FailureSeen>& failures);
  /// After a shrink, before iteration `iteration`: the replicas back onto
  /// the GPUs free again (core::regrow_plan), as a re-plan.
  void maybe_regrow(std::int64_t iteration);
  std::vector<TimeNs> controller_wall_ns_;

  Backend& backend_;
  ParallelPlan plan_;
  ParallelPlan original_;  // the plan the run started with (what a regrow returns to)
  std::optional<Controller> controller_;
  int snapshot_every_ = 0;
  std::optional<std::int64_t> last_snapshot_;  // the newest version taken
  int max_restarts_ = -1;                      // -1: no recovery
  ShrinkChoice shrink_;                        // empty: a failed GPU with no spare ends the run
  bool shrunk_ = false;                        // dropped replicas not grown back yet
  int restarts_ = 0;
  std::vector<TakenDirective> scheduled_;
  std::vector<PolicyNote> notes_;
  std::int64_t next_ = 0;                   // the iteration the next step runs
  std::optional<std::int64_t> resumed_at_;  // set_next_iteration's, after a restore
  std::int64_t completed_ = 0;              // iterations this runner stepped
  TimeNs total_ns_ = 0;
  std::optional<StepReport> last_;
  std::vector<TakenDirective> taken_;
  std::vector<DetectedStraggler> stragglers_;
  std::vector<FailureSeen> failures_;
};

}  // namespace parashift::core
