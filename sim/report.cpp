#include "sim/report.hpp"

#include "core/plan_json.hpp"

#include <cstdio>
#include <string>

namespace parashift::sim {

namespace {

double seconds(TimeNs t) {
  return core::ns_to_s(t);
}

std::string fmt(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

}  // namespace

nlohmann::json summary_json(const core::Scenario& scenario, const RunSummary& run) {
  const IterationResult& r = run.last;
  const WorkerStats& c = r.critical();
  return {
      {"scenario", scenario.name},
      {"model", scenario.model.name},
      {"params", scenario.model.total_params()},
      {"device", scenario.device.name},
      {"gpus", scenario.topology.gpu_count()},
      {"topology", scenario.topology_source.describe()},
      {"seq_len", scenario.training.seq_len},
      {"plan", scenario.plan},
      {"iterations", run.iterations},
      {"simulated_iterations", run.simulated_iterations},
      {"total_time_s", seconds(run.total_ns)},
      {"iteration_time_s", seconds(r.iteration_ns)},
      {"tokens_per_s", r.tokens_per_s},
      {"mfu", r.mfu},
      {"model_flops_per_iteration", r.model_flops},
      {"bubble_share", r.bubble_share},
      {"exposed_comm_s", seconds(r.exposed_comm_ns)},
      {"dp_sync_s", seconds(r.dp_sync_ns)},
      {"peak_memory_bytes", r.peak_memory_bytes},
      {"fits_memory", r.peak_memory_bytes <= scenario.device.hbm_bytes},
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
}

void print_summary(std::ostream& out, const core::Scenario& scenario, const RunSummary& run) {
  const IterationResult& r = run.last;
  const WorkerStats& c = r.critical();
  const double it_s = seconds(r.iteration_ns);
  out << "scenario      " << scenario.name << "\n";
  out << "model         " << scenario.model.name << " ("
      << fmt("%.1f", scenario.model.total_params() / 1e9) << "B params, seq "
      << scenario.training.seq_len << ")\n";
  out << "cluster       " << scenario.topology.gpu_count() << " x " << scenario.device.name
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
  out << "peak memory / GPU   " << fmt("%.2f", r.peak_memory_bytes / 1073741824.0) << " GiB (of "
      << fmt("%.0f", scenario.device.hbm_bytes / 1073741824.0) << " GiB)"
      << (r.peak_memory_bytes > scenario.device.hbm_bytes ? "  DOES NOT FIT: the plan needs more "
                                                            "memory than the device has"
                                                          : "")
      << "\n\n";
  out << "critical rank: stage " << c.stage << ", replica " << c.replica << ", cp " << c.cp_rank
      << "\n";
  out << "  compute " << fmt("%.4f", seconds(c.compute_ns)) << " s, tp comm "
      << fmt("%.4f", seconds(c.tp_comm_ns)) << " s, cp comm " << fmt("%.4f", seconds(c.cp_comm_ns))
      << " s, bubble " << fmt("%.4f", seconds(c.bubble_ns)) << " s\n";
  out << "  dp sync exposed " << fmt("%.4f", seconds(c.dp_exposed_ns)) << " s, optimizer "
      << fmt("%.4f", seconds(c.optimizer_ns)) << " s, param gather "
      << fmt("%.4f", seconds(c.param_gather_ns)) << " s\n";
}

}  // namespace parashift::sim
