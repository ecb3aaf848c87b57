// One point of `parashift sweep`: the scenario with the point's overrides,
// run as `simulate`, `plan` or `faults` would, reduced to the CSV's result
// columns. The columns, the plotted one and the "best" line derive from the
// cells alone, so rows read back from a CSV (--resume) and rows just run are
// handled by the same code.
#pragma once

#include <string>
#include <vector>

namespace parashift::tools {

enum class SweepRun { Simulate, Plan, Faults };

/// "simulate", "plan" or "faults" -> the run; false for anything else.
bool parse_sweep_run(const std::string& text, SweepRun& run);

struct SweepSettings {
  SweepRun run = SweepRun::Simulate;
  int seeds = 10;   // faults: failure draws per point
  double days = 0;  // faults: days per seed; 0: the scenario's faults.days
};

struct SweepResult {
  std::string status = "ok";       // or the one-line reason the point has no result
  std::vector<std::string> cells;  // one per result column when ok
};

/// The result columns after point, the grid keys and status.
const std::vector<std::string>& result_columns(SweepRun run);
/// The column the plot draws and its axis label ("tokens_per_s", "tokens/s").
std::size_t plotted_column(SweepRun run);
const char* plotted_label(SweepRun run);

/// Loads the scenario with `overrides` and runs it; an input error of the
/// point (an invalid plan, a topology the generator refuses) is its status.
SweepResult run_sweep_point(const std::string& scenario_path,
                            const std::vector<std::string>& overrides,
                            const SweepSettings& settings);

/// Whether an ok row competes for the best line (simulate: fits in memory).
bool best_eligible(SweepRun run, const SweepResult& result);
/// The value compared for the best line: higher is better.
double best_value(SweepRun run, const SweepResult& result);
/// "527680 tokens/s, iteration 7.949 s, tp4 pp4 ..." / "ETTR p50 98.91% (baseline 84.05%)".
std::string best_summary(SweepRun run, const SweepResult& result);
/// "best that fits in memory" / "best plan" / "best ETTR".
const char* best_heading(SweepRun run);

}  // namespace parashift::tools
