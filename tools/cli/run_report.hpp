// The report every run prints, whatever its backend: the policy's part
// (enabled modules, stragglers as first named, directives with the
// iteration they preceded, reason, gain and cost, failures seen) as text
// and as JSON, and one iteration's per-group communication and compute.
// `simulate --json` and `run --json` write their directives through
// policy_json, so the same run's directives read the same in both.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/backend.hpp"
#include "core/controller/job_runner.hpp"

namespace parashift::tools {

struct PolicyReport {
  std::vector<std::string> modules;  // enabled, in registration order
  std::vector<core::TakenDirective> directives;
  std::vector<core::DetectedStraggler> stragglers;
  std::vector<core::FailureSeen> failures;
  std::vector<core::PolicyNote> notes;  // rules' knob changes, plugins' notes
};

/// `runner`'s directives, stragglers and failures under `modules`.
PolicyReport policy_report(const std::vector<std::string>& modules, const core::JobRunner& runner);

/// "policy  straggler, balance", then one line per straggler, directive
/// ("before iteration 6: repartition [4,4,4,3] (stage 3 slow; gain 12 s), cost 0.032 s")
/// and failure; "no directives" when the policy took none. Nothing without
/// modules, directives or failures.
void print_policy(std::ostream& out, const PolicyReport& report);
/// {"policy": [...], "directives": [{kind, reason, predicted_gain_s, cost_s,
/// iteration, ...}], "stragglers": [...], "failures": [...]}.
nlohmann::json policy_json(const PolicyReport& report);

/// "compute 12.3 ms  tp 1.0 ms  pp 0.4 ms  dp 2.1 ms": the slowest rank's
/// compute and each kind's busiest group.
/// "A" for a run that kept its plan, "A -> B" for one re-planned from A to B.
std::string plan_path(const core::ParallelPlan& first, const core::ParallelPlan& last);
std::string comm_summary(const core::StepReport& report);
/// One iteration's report: times, per-rank vectors, per-group communication.
nlohmann::json step_json(const core::StepReport& report);

}  // namespace parashift::tools
