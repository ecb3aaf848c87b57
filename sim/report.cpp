#include "sim/report.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <variant>

#include "core/controller/calibration_report.hpp"
#include "core/plan_json.hpp"
#include "core/rank_layout.hpp"

namespace parashift::sim {

namespace {

double seconds(TimeNs t) {
  return core::ns_to_s(t);
}

nlohmann::json directives_json(const RunSummary& run) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& t : run.directives) {
    nlohmann::json d = t.directive;
    d["iteration"] = t.iteration;
    list.push_back(std::move(d));
  }
  return list;
}

nlohmann::json stragglers_json(const RunSummary& run) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& s : run.stragglers)
    list.push_back({{"iteration", s.iteration}, {"what", s.what}});
  return list;
}

std::string fmt(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

}  // namespace

MemoryFit memory_fit(const core::Scenario& scenario, const RunSummary& run) {
  const IterationResult& r = run.last;
  if (scenario.device_groups.empty()) return {r.peak_memory_bytes, scenario.device.hbm_bytes};
  const core::RankLayout layout(run.final_plan);
  MemoryFit worst{0, 1};
  for (const WorkerStats& w : r.workers) {
    const int gpu = layout.rank({0, w.cp_rank, w.replica, w.stage});
    double hbm = scenario.device.hbm_bytes;
    for (const core::DeviceGroup& g : scenario.device_groups)
      if (gpu >= g.first_gpu && gpu < g.first_gpu + g.gpus) hbm = g.device.hbm_bytes;
    const MemoryFit f{w.static_bytes + w.peak_activation_bytes, hbm};
    if (f.peak_bytes / f.hbm_bytes > worst.peak_bytes / worst.hbm_bytes) worst = f;
  }
  return worst;
}

nlohmann::json summary_json(const core::Scenario& scenario, const RunSummary& run) {
  const IterationResult& r = run.last;
  const WorkerStats& c = r.critical();
  nlohmann::json j = {
      {"scenario", scenario.name},
      {"model", scenario.model.name},
      {"params", scenario.model.total_params()},
      {"device", scenario.device.name},
      {"devices", core::describe_devices(scenario.device_groups, scenario.device,
                                         scenario.topology.gpu_count())},
      {"gpus", scenario.topology.gpu_count()},
      {"topology", scenario.topology_source.describe()},
      {"seq_len", scenario.training.seq_len},
      {"plan", scenario.plan},
      {"iterations", run.iterations},
      {"restarts", run.restarts},
      {"replayed_iterations", run.replayed},
      {"simulated_iterations", run.simulated_iterations},
      {"total_time_s", seconds(run.total_ns)},
      {"iteration_time_s", seconds(r.iteration_ns)},
      {"tokens_per_s", run.tokens_per_s()},
      {"iteration_tokens_per_s", r.tokens_per_s},
      {"healthy_iteration_time_s", seconds(run.healthy_iteration_ns)},
      {"time_lost_s", seconds(run.lost_ns())},
      {"policy", run.policy_modules},
      {"directives", directives_json(run)},
      {"stragglers", stragglers_json(run)},
      {"mfu", r.mfu},
      {"model_flops_per_iteration", r.model_flops},
      {"bubble_share", r.bubble_share},
      {"exposed_comm_s", seconds(r.exposed_comm_ns)},
      {"dp_sync_s", seconds(r.dp_sync_ns)},
      {"peak_memory_bytes", r.peak_memory_bytes},
      {"fits_memory", memory_fit(scenario, run).fits()},
      {"critical_rank",
       {{"stage", c.stage},
        {"replica", c.replica},
        {"cp_rank", c.cp_rank},
        {"compute_s", seconds(c.compute_ns)},
        {"tp_comm_s", seconds(c.tp_comm_ns)},
        {"cp_comm_s", seconds(c.cp_comm_ns)},
        {"bubble_s", seconds(c.bubble_ns)},
        {"dp_exposed_s", seconds(c.dp_exposed_ns)},
        {"optimizer_s", seconds(c.optimizer_ns)},
        {"param_gather_s", seconds(c.param_gather_ns)},
        {"static_memory_bytes", c.static_bytes},
        {"activation_memory_bytes", c.peak_activation_bytes}}},
      {"events", r.events},
  };
  if (run.calibration) j["calibration"] = core::calibration_json(*run.calibration);
  j["final_plan"] = run.final_plan.label();
  if (run.convergence) {
    j["convergence"] = {{"reached", run.convergence->reached},
                        {"progress_steps", run.convergence->progress_steps},
                        {"target_steps", run.convergence->target_steps},
                        {"tokens", run.tokens},
                        {"time_s", seconds(run.total_ns)}};
  }
  if (!run.snapshot_commits.empty()) {
    nlohmann::json commits = nlohmann::json::array();
    for (const SnapshotCommit& commit : run.snapshot_commits)
      commits.push_back({{"version", commit.version},
                         {"taken_s", seconds(commit.taken_ns)},
                         {"committed_s", seconds(commit.committed_ns)}});
    j["snapshot_commits"] = commits;
  }
  if (run.oracle) {
    j["oracle"] = {{"plan", run.oracle->plan.label()},
                   {"iteration_time_s", seconds(run.oracle->iteration_ns)},
                   {"tokens_per_s", run.oracle->tokens_per_s},
                   {"last_iteration_share", r.tokens_per_s / run.oracle->tokens_per_s}};
  }
  return j;
}

void print_summary(std::ostream& out, const core::Scenario& scenario, const RunSummary& run) {
  const IterationResult& r = run.last;
  const WorkerStats& c = r.critical();
  const double it_s = seconds(r.iteration_ns);
  out << "scenario      " << scenario.name << "\n";
  out << "model         " << scenario.model.name << " ("
      << fmt("%.1f", scenario.model.total_params() / 1e9) << "B params, seq "
      << scenario.training.seq_len << ")\n";
  out << "cluster       "
      << core::describe_devices(scenario.device_groups, scenario.device,
                                scenario.topology.gpu_count())
      << " on " << scenario.topology_source.describe() << "\n";
  out << "plan          " << scenario.plan.label() << ", global batch "
      << scenario.plan.global_batch << " (" << scenario.plan.micro_batches()
      << " micro-batches per replica)\n";
  out << "iterations    " << run.iterations << " (" << run.simulated_iterations
      << " simulated, total " << fmt("%.3f", seconds(run.total_ns)) << " s)\n\n";
  out << "iteration time      " << fmt("%.4f", it_s) << " s\n";
  out << "throughput          " << fmt("%.0f", r.tokens_per_s) << " tokens/s ("
      << fmt("%.1f", r.tokens_per_s / scenario.topology.gpu_count()) << " per GPU)\n";
  out << "MFU                 " << fmt("%.1f", 100.0 * r.mfu) << " %\n";
  out << "pipeline bubble     " << fmt("%.1f", 100.0 * r.bubble_share) << " % of the iteration\n";
  out << "exposed comm        " << fmt("%.4f", seconds(r.exposed_comm_ns)) << " s ("
      << fmt("%.1f",
             100.0 * static_cast<double>(r.exposed_comm_ns) / static_cast<double>(r.iteration_ns))
      << " %)\n";
  const MemoryFit fit = memory_fit(scenario, run);
  out << "peak memory / GPU   " << fmt("%.2f", fit.peak_bytes / 1073741824.0) << " GiB (of "
      << fmt("%.0f", fit.hbm_bytes / 1073741824.0) << " GiB)"
      << (fit.fits() ? "" : "  DOES NOT FIT: the plan needs more memory than the device has")
      << "\n\n";
  out << "critical rank: stage " << c.stage << ", replica " << c.replica << ", cp " << c.cp_rank
      << "\n";
  out << "  compute " << fmt("%.4f", seconds(c.compute_ns)) << " s, tp comm "
      << fmt("%.4f", seconds(c.tp_comm_ns)) << " s, cp comm " << fmt("%.4f", seconds(c.cp_comm_ns))
      << " s, bubble " << fmt("%.4f", seconds(c.bubble_ns)) << " s\n";
  out << "  dp sync exposed " << fmt("%.4f", seconds(c.dp_exposed_ns)) << " s, optimizer "
      << fmt("%.4f", seconds(c.optimizer_ns)) << " s, param gather "
      << fmt("%.4f", seconds(c.param_gather_ns)) << " s\n";
  if (run.convergence) {
    const ConvergenceResult& conv = *run.convergence;
    out << "\nconvergence         "
        << (conv.reached ? "target reached after " + std::to_string(run.iterations) + " iterations"
                         : "target not reached: " +
                               fmt("%.1f", 100.0 * conv.progress_steps / conv.target_steps) +
                               " % of it after " + std::to_string(run.iterations) + " iterations")
        << ", " << fmt("%.1f", seconds(run.total_ns)) << " s, " << fmt("%.4g", run.tokens)
        << " tokens\n";
  }
  if (run.policy_modules.empty() && run.lost_ns() == 0) return;
  out << "\nrun throughput      " << fmt("%.0f", run.tokens_per_s()) << " tokens/s over "
      << fmt("%.3f", seconds(run.total_ns)) << " s; time lost to slowdowns "
      << (run.restarts > 0 ? "and recovery " : "")
      << (run.batch_changed ? "not measured (the global batch changed)"
          : run.lost_ns() < 0
              ? "none, " + fmt("%.3f", seconds(-run.lost_ns())) + " s ahead of the healthy pace"
              : fmt("%.3f", seconds(run.lost_ns())) + " s")
      << " (healthy iteration " << fmt("%.4f", seconds(run.healthy_iteration_ns)) << " s)\n";
  const bool recovery_notes =
      std::any_of(run.notes.begin(), run.notes.end(),
                  [](const core::PolicyNote& n) { return n.module == "recovery"; });
  if (run.restarts > 0 || recovery_notes) {
    int from_remote = 0;
    for (const auto& t : run.directives)
      if (const auto* restore = std::get_if<core::RestoreDirective>(&t.directive.action))
        from_remote += restore->from_remote && t.source == core::DirectiveSource::Recovery;
    out << "recovery            " << run.restarts << " restart(s)";
    if (from_remote > 0)
      out << ": " << run.restarts - from_remote << " from in-memory snapshots, " << from_remote
          << " from the remote checkpoint\n";
    else
      out << " from the newest in-memory snapshot\n";
    for (const auto& t : run.directives)
      if (t.source == core::DirectiveSource::Recovery)
        out << "  before iteration " << t.iteration << ": " << core::to_string(t.directive) << "\n";
    for (const auto& n : run.notes)
      if (n.module == "recovery")
        out << "  before iteration " << n.iteration << ": " << n.message << "\n";
  }
  if (!run.snapshot_commits.empty()) {
    TimeNs longest = 0;
    for (const SnapshotCommit& commit : run.snapshot_commits)
      longest = std::max(longest, commit.committed_ns - commit.taken_ns);
    out << "replication         " << run.snapshot_commits.size()
        << " snapshot(s) replicated to their peer hosts; the longest committed "
        << fmt("%.3f", seconds(longest)) << " s after it was taken\n";
  }
  if (run.policy_modules.empty()) return;
  out << "policy              ";
  for (std::size_t i = 0; i < run.policy_modules.size(); ++i) {
    out << (i ? ", " : "") << run.policy_modules[i];
  }
  out << "\n";
  for (const auto& s : run.stragglers) {
    out << "  straggler after iteration " << s.iteration << ": " << s.what << "\n";
  }
  // Directives and notes (rules' changes, plugins' notes) in iteration order.
  std::size_t n = 0;
  auto note = [&](const core::PolicyNote& x) {
    out << "  before iteration " << x.iteration << ": " << x.module << ": " << x.message << "\n";
  };
  for (const auto& t : run.directives) {
    for (; n < run.notes.size() && run.notes[n].iteration <= t.iteration; ++n) note(run.notes[n]);
    out << "  before iteration " << t.iteration << ": " << core::to_string(t.directive) << "\n";
  }
  for (; n < run.notes.size(); ++n) note(run.notes[n]);
  if (run.directives.empty()) out << "  no directives\n";
  if (run.calibration) core::print_calibration(out, *run.calibration);
  if (!(run.final_plan.label() == scenario.plan.label()))
    out << "plan at the end     " << run.final_plan.label() << "\n";
  if (run.oracle) {
    out << "oracle              " << run.oracle->plan.label() << ": "
        << fmt("%.0f", run.oracle->tokens_per_s) << " tokens/s on the cluster as it truly is at "
        << "the last iteration; the last iteration ran "
        << fmt("%.1f", 100.0 * r.tokens_per_s / run.oracle->tokens_per_s) << " % of it\n";
  }
}

void print_comparison(std::ostream& out, const std::string& label_a, const RunSummary& a,
                      const std::string& label_b, const RunSummary& b) {
  char line[256];
  auto row = [&](const char* what, const std::string& x, const std::string& y) {
    std::snprintf(line, sizeof line, "%-28s %22s %22s\n", what, x.c_str(), y.c_str());
    out << line;
  };
  out << "\n";
  row("", label_a, label_b);
  row("throughput (tokens/s)", fmt("%.0f", a.tokens_per_s()), fmt("%.0f", b.tokens_per_s()));
  row("run time (s)", fmt("%.3f", seconds(a.total_ns)), fmt("%.3f", seconds(b.total_ns)));
  row("last iteration (s)", fmt("%.4f", seconds(a.last.iteration_ns)),
      fmt("%.4f", seconds(b.last.iteration_ns)));
  row("pipeline bubble (%)", fmt("%.1f", 100.0 * a.last.bubble_share),
      fmt("%.1f", 100.0 * b.last.bubble_share));
  auto lost = [](const RunSummary& r) {
    return r.batch_changed ? std::string("n/a") : fmt("%.3f", seconds(r.lost_ns()));
  };
  row("time lost to slowdowns (s)", lost(a), lost(b));
  if (a.convergence && b.convergence) {
    auto to_target = [](const RunSummary& r) {
      return r.convergence->reached ? fmt("%.1f", seconds(r.total_ns)) : std::string("not reached");
    };
    row("time to the target (s)", to_target(a), to_target(b));
  }
  row("decisions taken", std::to_string(a.directives.size()), std::to_string(b.directives.size()));
  // Recovery: the share of the throughput lost without the policy that the
  // policy wins back. It means something only when both runs have the same
  // healthy iteration (same plan and cluster) and b lost time to slowdowns.
  const double healthy = a.tokens / (a.iterations * seconds(a.healthy_iteration_ns));
  const double lost_b = healthy - b.tokens_per_s();
  const bool same_job = a.healthy_iteration_ns == b.healthy_iteration_ns;
  if (a.convergence && b.convergence && a.convergence->reached && b.convergence->reached) {
    // Under a convergence model the question is the time to the target,
    // not tokens/s (a larger batch trains more tokens per second and needs
    // more of them).
    out << "\n"
        << label_b << ": "
        << fmt("%+.1f", 100.0 * (seconds(b.total_ns) / seconds(a.total_ns) - 1.0))
        << " % time to the target against " << label_a << "\n";
  } else if (same_job && !a.batch_changed && !b.batch_changed && b.lost_ns() > 0 &&
             lost_b > 1e-3 * healthy) {
    out << "\n"
        << label_a << " recovers "
        << fmt("%.1f", 100.0 * (a.tokens_per_s() - b.tokens_per_s()) / lost_b)
        << " % of the throughput " << label_b << " loses to slowdowns (healthy "
        << fmt("%.0f", healthy) << " tokens/s)\n";
  } else if (a.tokens_per_s() > 0) {
    out << "\n"
        << label_b << ": " << fmt("%+.1f", 100.0 * (b.tokens_per_s() / a.tokens_per_s() - 1.0))
        << " % throughput against " << label_a
        << (a.lost_ns() == 0 && b.lost_ns() == 0 ? " (neither run is slowed)" : "") << "\n";
  }
}

}  // namespace parashift::sim
