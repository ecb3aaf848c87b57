// The iteration's two ends that are not the simulation itself: its input
// from a scenario, and what a result and a plan's memory accounting say.
#include <algorithm>

#include "core/scenario/scenario.hpp"
#include "sim/iteration.hpp"

namespace parashift::sim {

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
  return input;
}

}  // namespace parashift::sim
