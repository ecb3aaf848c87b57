#include "sim/run.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "sim/sim_backend.hpp"

namespace parashift::sim {

namespace {

// The scenario's first iteration with no fault event at all.
TimeNs healthy_iteration_ns(const core::Scenario& scenario) {
  core::Scenario healthy = scenario;
  if (healthy.faults) healthy.faults->events.clear();
  return SimBackend(healthy).step(healthy.plan).iteration_ns;
}

}  // namespace

RunSummary run_scenario(const core::Scenario& scenario, TraceRecorder* trace,
                        const RunProgress& progress) {
  RunSummary run;
  SimBackend backend(scenario);
  backend.set_trace(trace);
  // Without slowdown events the first iteration is the healthy one; only a
  // run with slowdowns pays for simulating a healthy twin.
  std::optional<core::StepReport> first;
  if (backend.has_slowdowns() || backend.has_failures()) {
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

  core::JobRunner runner(backend, scenario.plan);
  run.policy_modules = core::enabled_modules(scenario.policy);
  runner.set_policy(scenario, planned);
  runner.set_faults(scenario);
  bool alive = true;
  std::int64_t reached = 0;  // iterations done at least once (re-runs after a restore do not add)
  // By iteration: the tokens its latest run trained. The run's tokens are
  // those of the iterations its final state holds: work a restore rolled
  // back (to an older snapshot, or the remote checkpoint) and did not redo
  // is lost, as a fault campaign counts it.
  std::vector<double> kept_tokens;
  TimeNs last_start_ns = 0;
  // Under a convergence model the run also ends when it reaches its target.
  while (alive && !backend.converged() &&
         (by_duration ? runner.total_ns() < scenario.run.duration_ns
                      : runner.next_iteration() < planned)) {
    last_start_ns = runner.total_ns();
    const std::int64_t done_before = runner.iterations();
    int step_batch = runner.plan().global_batch;  // a re-plan may change it
    if (first) {
      alive = runner.record(std::move(*first));
      first.reset();
    } else {
      // The batch of the plan the iteration runs: after what the runner
      // applies before it (a scheduled re-plan, a regrow).
      runner.begin_iteration();
      step_batch = runner.plan().global_batch;
      alive = runner.record(backend.step(runner.plan()));
      backend.set_trace(nullptr);
    }
    if (runner.iterations() > done_before) {
      const auto i = static_cast<std::size_t>(runner.next_iteration() - 1);
      if (kept_tokens.size() <= i) kept_tokens.resize(i + 1, 0.0);
      kept_tokens[i] = static_cast<double>(step_batch) * scenario.training.seq_len;
      reached = std::max(reached, runner.next_iteration());
      run.batch_changed |= step_batch != scenario.plan.global_batch;
    }
    if (progress) progress(runner.iterations(), planned);
  }
  for (std::int64_t i = 0; i < runner.next_iteration(); ++i)
    run.tokens += kept_tokens[static_cast<std::size_t>(i)];
  run.iterations = static_cast<int>(runner.iterations());
  run.total_ns = runner.total_ns();
  if (scenario.convergence) {
    run.convergence = ConvergenceResult{backend.converged(), backend.progress_steps(),
                                        scenario.convergence->target_steps};
  }
  run.directives = runner.directives();
  run.stragglers = runner.stragglers();
  run.notes = runner.notes();
  run.failures = runner.failures();
  run.restarts = runner.restarts();
  run.replayed = static_cast<int>(runner.iterations() - reached);
  run.ended_on_failure = !alive;
  if (const core::Controller* c = runner.controller(); c != nullptr && c->calibration() != nullptr)
    run.calibration = c->calibration()->summary();
  run.simulated_iterations = backend.simulated_steps();
  run.snapshot_commits = backend.snapshot_commits();
  run.last = backend.last_result();
  run.final_plan = runner.plan();
  const core::ModuleConfig* replan = scenario.policy.find("replan");
  if (replan != nullptr && replan->enabled)
    run.oracle = oracle_at(
        scenario, last_start_ns,
        {std::min(backend.live_gpus(), scenario.plan.gpus()), run.final_plan.global_batch});
  return run;
}

}  // namespace parashift::sim
