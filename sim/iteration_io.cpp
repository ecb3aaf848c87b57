// The iteration's two ends that are not the simulation itself: its input
// from a scenario, and what a result and a plan's memory accounting say.
#include <algorithm>

#include "core/scenario/scenario.hpp"
#include "sim/iteration.hpp"
#include "sim/iteration_state.hpp"
#include "sim/network/flow_network.hpp"

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
  input.traffic = scenario.traffic;
  return input;
}

}  // namespace parashift::sim
