#include "sim/sim_backend.hpp"

#include <stdexcept>
#include <variant>

#include "core/rank_layout.hpp"

namespace parashift::sim {

namespace {

bool same_plan(const core::ParallelPlan& a, const core::ParallelPlan& b) {
  return a.label() == b.label() && a.global_batch == b.global_batch;
}

}  // namespace

SimBackend::SimBackend(const core::Scenario& scenario)
    : scenario_(scenario), paths_(scenario.topology) {}

core::Capabilities SimBackend::capabilities() const {
  core::Capabilities caps;
  caps.simulated_time = true;
  caps.live_repartition = true;
  caps.link_telemetry = scenario_.run.contention;
  caps.ranks = scenario_.topology.gpu_count();
  return caps;
}

core::StepReport SimBackend::step(const core::ParallelPlan& plan) {
  const bool changed =
      !last_ || !same_plan(*last_plan_, plan) || last_layers_ != layers_per_virtual_stage_;
  if (changed) {
    IterationInput input;
    input.model = &scenario_.model;
    input.device = &scenario_.device;
    input.plan = &plan;
    input.seq_len = scenario_.training.seq_len;
    input.layers_per_virtual_stage = layers_per_virtual_stage_;
    input.network = scenario_.run.contention ? NetworkModel::MaxMin : NetworkModel::Path;
    input.trace = trace_;
    const auto profile =
        core::work_profile(scenario_.model, scenario_.device, plan, scenario_.training.seq_len);
    last_ = simulate_iteration(input, profile, paths_);
    last_plan_ = plan;
    last_layers_ = layers_per_virtual_stage_;
    ++simulated_;
  }
  core::StepReport report;
  report.iteration = iteration_++;
  report.iteration_ns = last_->iteration_ns;
  const core::RankLayout layout(plan);
  const int ranks = layout.ranks();
  report.rank_compute_ns.resize(ranks);
  report.rank_exposed_comm_ns.resize(ranks);
  report.rank_peak_memory_bytes.resize(ranks);
  for (int r = 0; r < ranks; ++r) {
    const auto c = layout.coord(r);
    const WorkerStats& w = last_->workers[c.cp + plan.cp * (c.dp + plan.dp * c.pp)];
    report.rank_compute_ns[r] = w.compute_ns;
    report.rank_exposed_comm_ns[r] = w.tp_comm_ns + w.cp_comm_ns + w.dp_exposed_ns;
    report.rank_peak_memory_bytes[r] = w.static_bytes + w.peak_activation_bytes;
  }
  const double iteration_s = core::ns_to_s(last_->iteration_ns);
  for (const LinkUse& use : last_->links) {
    report.links.push_back({scenario_.topology.link(use.link).name, use.bytes,
                            core::ns_to_s(use.busy_ns) / iteration_s});
  }
  return report;
}

void SimBackend::apply(const core::Directive& directive) {
  if (const auto* d = std::get_if<core::RepartitionDirective>(&directive.action)) {
    layers_per_virtual_stage_ = d->layers_per_stage;
    return;
  }
  if (std::holds_alternative<core::ReplanDirective>(directive.action)) {
    layers_per_virtual_stage_.clear();  // the next step() takes the new plan
    return;
  }
  throw std::invalid_argument(std::string("the simulator backend does not apply '") +
                              core::kind_name(directive.action) + "' directives yet");
}

}  // namespace parashift::sim
