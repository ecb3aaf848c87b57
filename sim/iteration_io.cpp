// The iteration's two ends that are not the simulation itself: its input
// from a scenario, and what a result and a plan's memory accounting say.
#include <algorithm>

#include "core/scenario/scenario.hpp"
#include "sim/iteration.hpp"
#include "sim/iteration_state.hpp"
#include "sim/network/flow_network.hpp"
#include "sim/trace.hpp"

namespace parashift::sim {

std::vector<LinkUse> detail::link_uses(const FlowNetwork& network) {
  std::vector<LinkUse> uses;
  for (topo::LinkId id = 0; id < network.topology().link_count(); ++id) {
    const double bytes = network.link_bytes(id);
    if (bytes > 0)
      uses.push_back({id, bytes, network.link_busy_ns(id), network.link_foreign_bytes(id)});
  }
  return uses;
}

std::unique_ptr<FlowNetwork> detail::make_flow_network(Kernel& kernel, const PathModel& paths,
                                                       const IterationInput& in) {
  auto network = std::make_unique<FlowNetwork>(kernel, paths.topology());
  network->set_class_weights(in.traffic);
  for (const auto& [link, bandwidth] : paths.link_overrides())
    network->set_link_bandwidth(link, bandwidth);
  if (in.trace != nullptr) {
    network->set_busy_observer([trace = in.trace](topo::LinkId link, TimeNs a, TimeNs b) {
      trace->link_busy(link, a, b);
    });
  }
  return network;
}

void detail::fill_rates(IterationResult& r, const IterationInput& in) {
  const WorkerStats& c = r.critical();
  r.exposed_comm_ns = c.tp_comm_ns + c.cp_comm_ns + c.dp_exposed_ns;
  const core::ParallelPlan& plan = *in.plan;
  r.model_flops = core::model_flops_per_iteration(*in.model, plan, in.seq_len);
  const double peak = plan.precision == core::Precision::Fp8 ? in.device->peak_fp8_flops_per_s
                                                             : in.device->peak_bf16_flops_per_s;
  const double seconds = core::ns_to_s(r.iteration_ns);
  r.mfu = r.model_flops / (seconds * plan.gpus() * peak);
  r.tokens_per_s = static_cast<double>(plan.global_batch) * in.seq_len / seconds;
}

const WorkerStats& IterationResult::critical() const {
  return *std::max_element(
      workers.begin(), workers.end(),
      [](const WorkerStats& a, const WorkerStats& b) { return a.finish_ns < b.finish_ns; });
}

IterationInput scenario_input(const core::Scenario& scenario, const core::DeviceSpec& device,
                              NetworkModel network) {
  IterationInput input;
  input.model = &scenario.model;
  input.device = &device;
  input.plan = &scenario.plan;
  input.seq_len = scenario.training.seq_len;
  input.network = network;
  input.nccl_algo = scenario.nccl_algo;
  input.traffic = scenario.traffic;
  return input;
}

}  // namespace parashift::sim
