// The live decision loop: observe a StepReport, update the robust state
// estimate, run the enabled policy modules in registration order, and emit
// the Directives they decide, each logged with its reason, predicted gain and
// cost. The same loop runs on every Backend; what a backend can apply is read
// from its Capabilities.
//
//   Controller ctl(job, read_policy_config(policy_section), backend.capabilities());
//   for (int i = 0; i < iterations; ++i) ctl.step(backend);   // step, observe, apply
//   for (const auto& d : ctl.log()) std::cout << to_string(d) << '\n';
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/backend.hpp"
#include "core/controller/cost_calibration.hpp"
#include "core/controller/job_model.hpp"
#include "core/controller/policy_config.hpp"
#include "core/controller/policy_module.hpp"
#include "core/controller/policy_registry.hpp"
#include "core/controller/policy_rules.hpp"
#include "core/controller/state_estimate.hpp"

namespace parashift::core {

class Controller {
 public:
  /// Uses the built-in modules.
  Controller(JobModel job, PolicyConfig config, Capabilities capabilities);
  Controller(JobModel job, PolicyConfig config, Capabilities capabilities,
             const PolicyRegistry& registry);

  /// Takes one iteration's report; returns the directives to apply before the
  /// next iteration, in order (each already in log()).
  std::vector<Directive> observe(const StepReport& report);
  /// What the backend can do and where the ranks run now (spares, ranks'
  /// GPUs after a remap or re-plan): the runner passes them before each
  /// observe, so modules read the placement as it is, not as it started.
  void set_capabilities(Capabilities capabilities) { capabilities_ = std::move(capabilities); }
  /// Records that the backend applied `directive`: the layer split, the
  /// micro-batch counts or the plan change, and the balancer waits a window.
  void applied(const Directive& directive);
  /// One turn: backend.step(plan), observe, apply each directive (the backend
  /// throws std::invalid_argument for one it cannot apply). Returns the report.
  StepReport step(Backend& backend);

  const JobModel& job() const { return job_; }
  const StateEstimate& state() const { return state_; }
  const std::vector<StragglerFinding>& stragglers() const { return stragglers_; }
  const std::vector<Decision>& log() const { return log_; }
  /// The module settings now, after any rule changed them.
  const PolicyConfig& config() const { return config_; }
  /// Directives issued so far (the log's entries with applied == true).
  std::int64_t directives_issued() const { return issued_; }
  /// The calibrated cost model (module `calibrate`); null when it is off or
  /// the job has no cost inputs.
  const CostCalibration* calibration() const { return calibration_ ? &*calibration_ : nullptr; }
  /// The enabled module `name`; null when it is not enabled.
  const PolicyModule* module(const std::string& name) const;

 private:
  // Makes the enabled modules in registration order; keeps the instance of
  // each module not in `rebuild` (all are made when it is null).
  void build_modules(const std::vector<std::string>* rebuild = nullptr);
  // Fires the rules that hold after this iteration and logs their changes.
  void run_rules();

  JobModel job_;
  PolicyConfig config_;
  Capabilities capabilities_;
  PolicyRegistry registry_;
  StateEstimate state_;
  std::vector<std::pair<std::string, std::unique_ptr<PolicyModule>>> modules_;
  RuleEngine rules_;
  std::vector<StragglerFinding> stragglers_;
  std::vector<Decision> log_;
  std::int64_t iteration_ = 0;
  std::int64_t since_change_ = 0;  // iterations since a directive was applied (the window at start)
  std::int64_t issued_ = 0;
  std::optional<CostCalibration> calibration_;
};

}  // namespace parashift::core
