// The simulator as a core::Backend: each step() simulates one iteration of
// the scenario's cluster; an iteration is re-simulated only when something
// that affects it (plan, layer split, slowdowns) changed since the last one.
#pragma once

#include <optional>

#include "core/backend.hpp"
#include "core/cost/work_profile.hpp"
#include "core/scenario/scenario.hpp"
#include "sim/iteration.hpp"
#include "sim/path_model.hpp"

namespace parashift::sim {

class SimBackend : public core::Backend {
 public:
  explicit SimBackend(const core::Scenario& scenario);

  core::Capabilities capabilities() const override;
  core::StepReport step(const core::ParallelPlan& plan) override;
  void apply(const core::Directive& directive) override;

  /// The full result of the latest step.
  const IterationResult& last_result() const { return *last_; }
  /// How many steps were simulated rather than reused.
  int simulated_steps() const { return simulated_; }
  /// Record the next simulated iteration into `trace` (null: stop recording).
  void set_trace(TraceRecorder* trace) { trace_ = trace; }
  const PathModel& paths() const { return paths_; }

 private:
  const core::Scenario& scenario_;
  PathModel paths_;
  std::vector<int> layers_per_virtual_stage_;
  std::optional<core::ParallelPlan> last_plan_;
  std::vector<int> last_layers_;
  std::optional<IterationResult> last_;
  std::int64_t iteration_ = 0;
  int simulated_ = 0;
  TraceRecorder* trace_ = nullptr;
};

}  // namespace parashift::sim
