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

// Bytes per parameter held on a GPU, from the ZeRO paper's mixed-precision
// Adam accounting: 2 (bf16 weights) + 2 (bf16 gradients) + 12 (fp32 master
// weights, momentum, variance). The distributed optimizer shards the 12 over
// data parallelism; FSDP / ZeRO-3 shards all 16.
double static_bytes_per_param(const core::ParallelPlan& plan) {
  const double dp = plan.dp;
  switch (plan.optimizer_sharding) {
    case core::OptimizerSharding::None:
      return 16.0;
    case core::OptimizerSharding::Distributed:
      return 4.0 + 12.0 / dp;
    case core::OptimizerSharding::Fsdp:
      return 16.0 / dp;
  }
  return 16.0;
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
