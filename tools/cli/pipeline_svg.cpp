#include "tools/cli/pipeline_svg.hpp"

#include <algorithm>
#include <map>

#include "tools/cli/format_number.hpp"

namespace parashift::tools {

namespace {

enum Kind { kForward, kBackward, kWeightGrad, kGradSync };

// "F3" / "B3.1" / "W0": the pass letter, then micro-batch[.chunk].
Kind kind_of_pass(const std::string& name) {
  if (!name.empty() && name[0] == 'B') return kBackward;
  if (!name.empty() && name[0] == 'W') return kWeightGrad;
  return kForward;
}

// "1.25 to 3.5 ms": a bar's span for its tooltip.
std::string span_ms(double start_s, double end_s) {
  return fmt("%.4g", start_s * 1e3) + " to " + fmt("%.4g", end_s * 1e3) + " ms";
}

std::string pass_detail(const std::string& name, double start_s, double end_s) {
  static const char* const kWhat[] = {"forward", "backward", "weight gradients"};
  const std::string rest = name.size() > 1 ? name.substr(1) : "";
  const auto dot = rest.find('.');
  std::string detail =
      std::string(kWhat[kind_of_pass(name)]) + " of micro-batch " + rest.substr(0, dot);
  if (dot != std::string::npos) detail += ", chunk " + rest.substr(dot + 1);
  return detail + ": " + span_ms(start_s, end_s);
}

}  // namespace

Timeline pipeline_timeline(const core::Scenario& scenario, const sim::TraceRecorder& trace,
                           const sim::IterationResult& result) {
  const core::ParallelPlan& plan = scenario.plan;
  const sim::WorkerStats& critical = result.critical();
  Timeline t;
  t.title = scenario.name + ": " + plan.label() + ", replica " + std::to_string(critical.replica) +
            " cp " + std::to_string(critical.cp_rank) + " (finished last), first iteration";
  t.kinds = {{"forward", "#4e79a7"},
             {"backward", "#59a14f"},
             {"weight gradients", "#76b7b2"},
             {"data-parallel gradient sync", "#f28e2b"}};
  // Track ids (sim/iteration.hpp): worker cp_rank + cp * (replica + dp * stage),
  // data-parallel group cp_rank + cp * stage.
  std::map<int, std::size_t> row_of_worker, row_of_group;
  for (int s = 0; s < plan.pp; ++s) {
    row_of_worker[critical.cp_rank + plan.cp * (critical.replica + plan.dp * s)] = t.rows.size();
    t.rows.push_back({"stage " + std::to_string(s), {}});
  }
  for (int s = 0; s < plan.pp; ++s) {
    row_of_group[critical.cp_rank + plan.cp * s] = t.rows.size();
    t.rows.push_back({"dp sync, stage " + std::to_string(s), {}});
  }
  for (const auto& e : trace.events()) {
    const double start_s = core::ns_to_s(e.start_ns);
    const double end_s = core::ns_to_s(e.start_ns + e.duration_ns);
    if (e.pid == sim::TraceRecorder::kWorkerTrack) {
      const auto row = row_of_worker.find(e.tid);
      if (row == row_of_worker.end()) continue;
      t.rows[row->second].bars.push_back({start_s, end_s, kind_of_pass(e.name), e.name.substr(1),
                                          pass_detail(e.name, start_s, end_s)});
    } else if (e.pid == sim::TraceRecorder::kGroupTrack) {
      const auto row = row_of_group.find(e.tid);
      if (row == row_of_group.end()) continue;
      t.rows[row->second].bars.push_back(
          {start_s, end_s, kGradSync, "", "gradient sync: " + span_ms(start_s, end_s)});
    } else {
      continue;
    }
    t.end_s = std::max(t.end_s, end_s);
  }
  return t;
}

}  // namespace parashift::tools
