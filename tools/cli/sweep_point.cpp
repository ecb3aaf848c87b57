#include "tools/cli/sweep_point.hpp"

#include "core/input_error.hpp"
#include "core/planner/planner.hpp"
#include "core/scenario/scenario.hpp"
#include "sim/faults/campaign.hpp"
#include "sim/report.hpp"
#include "sim/run.hpp"
#include "tools/cli/format_number.hpp"

namespace parashift::tools {

namespace {

double cell_number(const SweepResult& r, std::size_t column) {
  return column < r.cells.size() ? std::stod(r.cells[column]) : 0.0;
}

// As `simulate` runs it: fail events on GPUs recovered when snapshots are
// on; a failed link is refused by the simulator, naming the event.
SweepResult simulate_point(const core::Scenario& scenario) {
  const sim::RunSummary run = sim::run_scenario(scenario);
  return {"ok",
          {std::to_string(scenario.topology.gpu_count()), scenario.plan.label(),
           fmt("%.6f", core::ns_to_s(run.last.iteration_ns)), fmt("%.1f", run.tokens_per_s()),
           fmt("%.5f", run.last.mfu), fmt("%.5f", run.last.bubble_share),
           fmt("%.3f", run.last.peak_memory_bytes / core::gib(1)),
           sim::memory_fit(scenario, run).fits() ? "true" : "false"}};
}

SweepResult plan_point(const core::Scenario& scenario) {
  const core::PlannerInput in = core::planner_input_of(scenario);
  core::PlannerOptions options;
  options.top_k = 1;
  const core::PlanSearch found = core::search_plans(in, options);
  if (found.top.empty()) {
    return {"no valid plan fits in memory (" + std::to_string(found.stats.enumerated) +
                " enumerated, " + std::to_string(found.stats.pruned_by_memory) + " over memory)",
            {}};
  }
  const core::RankedPlan& best = found.top.front();
  const double iteration_s = core::ns_to_s(best.estimate.total_ns);
  const double tokens =
      static_cast<double>(scenario.training.global_batch) * scenario.training.seq_len;
  return {"ok",
          {std::to_string(in.cluster.gpus), best.label, fmt("%.6f", iteration_s),
           fmt("%.1f", tokens / iteration_s), fmt("%.5f", best.estimate.mfu),
           fmt("%.5f", best.estimate.bubble_share()),
           fmt("%.3f", best.estimate.memory.total_bytes() / core::gib(1)),
           std::to_string(found.stats.evaluated)}};
}

SweepResult faults_point(const core::Scenario& scenario, const SweepSettings& settings) {
  if (!scenario.faults)
    throw core::InputError(scenario.file +
                           ": faults: missing; `sweep --run faults` needs a faults section");
  const auto setup = sim::make_campaign_setup(scenario, *scenario.faults);
  sim::CampaignOptions options;
  options.seeds = settings.seeds;
  options.days = settings.days > 0 ? settings.days : scenario.faults->days;
  const sim::CampaignResult r = sim::run_campaign(*setup, options);
  return {"ok",
          {std::to_string(scenario.topology.gpu_count()), std::to_string(r.failures),
           fmt("%.5f", r.snapshot.ettr.p50), fmt("%.5f", r.snapshot.ettr.p1),
           fmt("%.5f", r.snapshot.ettr.min), fmt("%.5f", r.baseline.ettr.p50),
           fmt("%.1f", r.snapshot.lost_work_s.p50), fmt("%.1f", r.snapshot.recovery_s.p50)}};
}

}  // namespace

bool parse_sweep_run(const std::string& text, SweepRun& run) {
  if (text == "simulate")
    run = SweepRun::Simulate;
  else if (text == "plan")
    run = SweepRun::Plan;
  else if (text == "faults")
    run = SweepRun::Faults;
  else
    return false;
  return true;
}

const std::vector<std::string>& result_columns(SweepRun run) {
  static const std::vector<std::string> simulate = {
      "gpus", "plan",         "iteration_s",     "tokens_per_s",
      "mfu",  "bubble_share", "peak_memory_gib", "fits_memory"};
  static const std::vector<std::string> plan = {
      "gpus", "best_plan",    "iteration_s",     "tokens_per_s",
      "mfu",  "bubble_share", "peak_memory_gib", "plans_evaluated"};
  static const std::vector<std::string> faults = {
      "gpus",     "failures",          "ettr_p50",        "ettr_p1",
      "ettr_min", "baseline_ettr_p50", "lost_work_p50_s", "recovery_p50_s"};
  return run == SweepRun::Simulate ? simulate : run == SweepRun::Plan ? plan : faults;
}

std::size_t plotted_column(SweepRun run) {
  return run == SweepRun::Faults ? 2 : 3;
}

const char* plotted_label(SweepRun run) {
  return run == SweepRun::Faults ? "ETTR p50 (in-memory snapshots)" : "tokens/s";
}

SweepResult run_sweep_point(const std::string& scenario_path,
                            const std::vector<std::string>& overrides,
                            const SweepSettings& settings) {
  try {
    core::ScenarioOptions load;
    load.plan_optional = settings.run == SweepRun::Plan;  // the search needs no plan
    const core::Scenario scenario = core::load_scenario(scenario_path, overrides, load);
    switch (settings.run) {
      case SweepRun::Simulate:
        return simulate_point(scenario);
      case SweepRun::Plan:
        return plan_point(scenario);
      case SweepRun::Faults:
        return faults_point(scenario, settings);
    }
  } catch (const core::InputError& e) {  // topology errors are input errors too
    return {e.what(), {}};
  }
  return {"?", {}};
}

bool best_eligible(SweepRun run, const SweepResult& r) {
  if (r.status != "ok") return false;
  return run != SweepRun::Simulate || (r.cells.size() > 7 && r.cells[7] == "true");
}

double best_value(SweepRun run, const SweepResult& r) {
  return cell_number(r, plotted_column(run));
}

std::string best_summary(SweepRun run, const SweepResult& r) {
  if (run == SweepRun::Faults) {
    return "ETTR p50 " + fmt("%.2f", 100 * cell_number(r, 2)) + "% (baseline " +
           fmt("%.2f", 100 * cell_number(r, 5)) + "%), " + r.cells[1] + " failures";
  }
  return fmt("%.0f", cell_number(r, 3)) + " tokens/s, iteration " + fmt("%.3f", cell_number(r, 2)) +
         " s, " + r.cells[1];
}

const char* best_heading(SweepRun run) {
  switch (run) {
    case SweepRun::Simulate:
      return "best that fits in memory";
    case SweepRun::Plan:
      return "best plan";
    case SweepRun::Faults:
      return "best ETTR";
  }
  return "best";
}

}  // namespace parashift::tools
