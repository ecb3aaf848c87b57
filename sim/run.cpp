#include "sim/run.hpp"

#include <cmath>
#include <optional>

#include "core/controller/controller.hpp"
#include "core/scenario/cluster_view.hpp"
#include "sim/sim_backend.hpp"

namespace parashift::sim {

namespace {

TimeNs healthy_iteration_ns(const core::Scenario& scenario) {
  SimBackend healthy(scenario);
  healthy.set_slowdowns(Slowdowns({}, scenario.topology, scenario.run.seed));
  return healthy.step(scenario.plan).iteration_ns;
}

}  // namespace

RunSummary run_scenario(const core::Scenario& scenario, TraceRecorder* trace) {
  RunSummary run;
  SimBackend backend(scenario);
  backend.set_trace(trace);
  // Without slowdown events the first iteration is the healthy one; only a
  // run with slowdowns pays for simulating a healthy twin.
  std::optional<core::StepReport> first;
  if (backend.has_slowdowns()) {
    run.healthy_iteration_ns = healthy_iteration_ns(scenario);
  } else {
    first = backend.step(scenario.plan);
    backend.set_trace(nullptr);
    run.healthy_iteration_ns = first->iteration_ns;
  }
  const bool by_duration = scenario.run.duration_ns > 0;
  // The policy's remaining-run horizon: the iterations asked for, or those a
  // healthy cluster needs to fill the duration.
  const std::int64_t planned =
      by_duration
          ? static_cast<std::int64_t>(std::ceil(static_cast<double>(scenario.run.duration_ns) /
                                                static_cast<double>(run.healthy_iteration_ns)))
          : scenario.run.iterations;

  std::optional<core::Controller> controller;
  for (const auto& m : scenario.policy.modules) {
    if (m.enabled) run.policy_modules.push_back(m.name);
  }
  if (!run.policy_modules.empty()) {
    const auto profile = core::work_profile(scenario.model, scenario.device, scenario.plan,
                                            scenario.training.seq_len);
    controller.emplace(core::make_job_model(scenario.model, scenario.device, scenario.plan, profile,
                                            scenario.training.seq_len, planned,
                                            std::max(1, scenario.topology.gpus_per_host())),
                       scenario.policy, backend.capabilities());
  }
  const double tokens_per_iteration =
      static_cast<double>(scenario.plan.global_batch) * scenario.training.seq_len;
  while (by_duration ? run.total_ns < scenario.run.duration_ns : run.iterations < planned) {
    core::StepReport report;
    if (first) {
      report = std::move(*first);
      first.reset();
    } else {
      report = backend.step(scenario.plan);
      backend.set_trace(nullptr);
    }
    run.total_ns += report.iteration_ns;
    run.tokens += tokens_per_iteration;
    ++run.iterations;
    if (!controller) continue;
    const std::size_t known = run.stragglers.size();
    for (const core::Directive& d : controller->observe(report)) {
      backend.apply(d);
      controller->applied(d);
      run.directives.push_back({run.iterations, d});
    }
    for (const auto& finding : controller->stragglers()) {
      bool seen = false;
      for (std::size_t i = 0; i < known && !seen; ++i) {
        seen = run.stragglers[i].what.rfind(finding.subject() + " ", 0) == 0;
      }
      if (!seen) run.stragglers.push_back({run.iterations, finding.describe()});
    }
  }
  run.simulated_iterations = backend.simulated_steps();
  run.last = backend.last_result();
  return run;
}

}  // namespace parashift::sim
