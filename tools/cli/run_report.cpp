#include "tools/cli/run_report.hpp"

#include <algorithm>

#include "tools/cli/format_number.hpp"

namespace parashift::tools {

namespace {

double ms(core::TimeNs t_ns) {
  return static_cast<double>(t_ns) / 1e6;
}

}  // namespace

PolicyReport policy_report(const std::vector<std::string>& modules, const core::JobRunner& runner) {
  return {modules, runner.directives(), runner.stragglers(), runner.failures(), runner.notes()};
}

void print_policy(std::ostream& out, const PolicyReport& r) {
  if (r.modules.empty() && r.directives.empty() && r.failures.empty()) return;
  out << "policy              ";
  for (std::size_t i = 0; i < r.modules.size(); ++i) out << (i ? ", " : "") << r.modules[i];
  if (r.modules.empty()) out << "none (scheduled directives only)";
  out << "\n";
  for (const auto& s : r.stragglers)
    out << "  straggler after iteration " << s.iteration << ": " << s.what << "\n";
  // Directives and notes (rules' changes, plugins' notes) in iteration order.
  std::size_t n = 0;
  auto note = [&](const core::PolicyNote& x) {
    out << "  before iteration " << x.iteration << ": " << x.module << ": " << x.message << "\n";
  };
  for (const auto& t : r.directives) {
    for (; n < r.notes.size() && r.notes[n].iteration <= t.iteration; ++n) note(r.notes[n]);
    out << "  before iteration " << t.iteration << ": " << core::to_string(t.directive) << ", cost "
        << fmt("%.4g", t.cost_s) << " s\n";
  }
  for (; n < r.notes.size(); ++n) note(r.notes[n]);
  if (r.directives.empty()) out << "  no directives\n";
  for (const auto& f : r.failures) out << "  failure: " << core::to_string(f) << "\n";
}

nlohmann::json policy_json(const PolicyReport& r) {
  nlohmann::json directives = nlohmann::json::array();
  for (const auto& t : r.directives) {
    nlohmann::json d = t.directive;
    d["iteration"] = t.iteration;
    d["cost_s"] = t.cost_s;
    directives.push_back(std::move(d));
  }
  nlohmann::json stragglers = nlohmann::json::array();
  for (const auto& s : r.stragglers)
    stragglers.push_back({{"iteration", s.iteration}, {"what", s.what}});
  nlohmann::json notes = nlohmann::json::array();
  for (const auto& n : r.notes)
    notes.push_back({{"iteration", n.iteration}, {"module", n.module}, {"message", n.message}});
  nlohmann::json failures = nlohmann::json::array();
  for (const auto& f : r.failures) {
    nlohmann::json one{{"kind", f.kind},
                       {"component", f.component},
                       {"at_ns", f.at_ns},
                       {"iteration", f.iteration}};
    if (!f.detail.empty()) one["detail"] = f.detail;
    failures.push_back(std::move(one));
  }
  return {{"policy", r.modules},
          {"directives", directives},
          {"stragglers", stragglers},
          {"notes", notes},
          {"failures", failures}};
}

std::string plan_path(const core::ParallelPlan& first, const core::ParallelPlan& last) {
  const bool same = first.label() == last.label() && first.global_batch == last.global_batch;
  if (same) return first.label();
  return first.label() + " -> " + last.label() + ", global batch " +
         std::to_string(last.global_batch);
}

std::string comm_summary(const core::StepReport& r) {
  core::TimeNs tp = 0, cp = 0, pp = 0, dp = 0;
  for (const auto& g : r.comm) {
    const std::string kind = g.group.substr(0, 2);
    core::TimeNs& slot = kind == "tp" ? tp : kind == "cp" ? cp : kind == "pp" ? pp : dp;
    slot = std::max(slot, g.busy_ns);
  }
  core::TimeNs compute = 0;
  for (auto c : r.rank_compute_ns) compute = std::max(compute, c);
  return "compute " + fmt("%.1f", ms(compute)) + " ms  tp " + fmt("%.1f", ms(tp)) + " ms  " +
         (cp > 0 ? "cp " + fmt("%.1f", ms(cp)) + " ms  " : "") + "pp " + fmt("%.1f", ms(pp)) +
         " ms  dp " + fmt("%.1f", ms(dp)) + " ms";
}

nlohmann::json step_json(const core::StepReport& r) {
  nlohmann::json comm = nlohmann::json::array();
  for (const auto& g : r.comm)
    comm.push_back(
        {{"group", g.group}, {"kind", g.kind}, {"busy_ns", g.busy_ns}, {"bytes", g.bytes}});
  nlohmann::json out{{"iteration", r.iteration},
                     {"iteration_ns", r.iteration_ns},
                     {"rank_compute_ns", r.rank_compute_ns},
                     {"rank_exposed_comm_ns", r.rank_exposed_comm_ns},
                     {"rank_peak_memory_bytes", r.rank_peak_memory_bytes},
                     {"comm", comm}};
  // The share of the gradient each probed compressor leaves out (`sync` on the executor).
  if (!r.compression_fits.empty()) {
    nlohmann::json fits = nlohmann::json::object();
    for (const auto& f : r.compression_fits) fits[core::to_string(f.compressor)] = f.left_out;
    out["compression_left_out"] = fits;
  }
  return out;
}

}  // namespace parashift::tools
