// Bubble-aware balancing on the pipeline model (pipeline_model.hpp):
//  (a) re-partition: layers per pipeline stage that minimise the slowest
//      stage's time, within each GPU's memory (the same split in every
//      replica: their gradients are reduced layer by layer);
//  (b) re-balance: fewer micro-batches for replicas holding a slow GPU, more
//      for the others, the global batch kept exact.
// Each candidate's predicted gain over the remaining run is weighed against
// its cost: a re-partition stops the job while every moved layer's weights,
// gradients and optimizer state (params x static_bytes_per_param) cross the
// network at move_bandwidth; a re-balance moves no state (cost 0). The best
// candidate is applied when gain - cost >= min_gain_s, gain > cost and the
// iteration gets at least min_improvement faster, once it has been the best
// for `patience` consecutive iterations; considered and rejected candidates
// are logged with their gain and cost.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/controller/pipeline_model.hpp"
#include "core/controller/policy_module.hpp"

namespace parashift::core {

struct BalancerOptions {
  double min_gain_s = 60;
  double min_improvement = 0.05;
  double move_bandwidth_Bps = gbps(400);
  bool repartition = true;
  bool rebalance = true;
  /// Consecutive iterations the same change must be the best that pays
  /// before it is applied (1: at once; 3, as the straggler detector's). On
  /// measured hardware a core can run slow for a few seconds, long enough to
  /// move a window's medians: on the 2-vCPU dev VM, 16 healthy threaded hw
  /// ranks drew 46 directives in 1,000 iterations at patience 1, most undone
  /// a window later, and 2 at patience 3.
  int patience = 3;
};

/// What moving from one layer split to another costs. Each GPU moves its own
/// shard of a layer; all move at once, so the time is that of the GPU that
/// sends or receives the most layers.
struct MoveCost {
  int layers_moved = 0;          // layers whose physical stage changes
  int busiest_stage_layers = 0;  // max over stages of layers sent or received
  double bytes_per_gpu = 0;      // busiest x params_per_gpu_layer x static_bytes_per_param
  double seconds = 0;            // bytes_per_gpu / bandwidth
};
MoveCost repartition_cost(const JobModel& job, const std::vector<int>& from_virtual_layers,
                          const std::vector<int>& to_virtual_layers, double bandwidth_Bps);

/// Largest layer count each physical stage can hold within job.memory_limit(stage),
/// from its measured peak (or the model alone when none is measured).
std::vector<int> stage_layer_caps(const JobModel& job, const StageCosts& costs);
/// Largest micro-batch count each replica can run within the memory limit.
std::vector<int> micro_batch_caps(const JobModel& job, const StageCosts& costs);

class Balancer : public PolicyModule {
 public:
  explicit Balancer(BalancerOptions options) : options_(options) {}
  void run(PolicyContext& context) override;

 private:
  struct Candidate {
    Directive directive;
    double gain_s = 0;
    double cost_s = 0;
    double improvement = 0;
  };
  std::optional<Candidate> repartition(const PolicyContext& context, const StageCosts& costs,
                                       double now_ns, double remaining) const;
  std::optional<Candidate> rebalance(const PolicyContext& context, const StageCosts& costs,
                                     double now_ns, double remaining) const;

  BalancerOptions options_;
  std::string last_rejected_;  // not logged again while unchanged
  std::string pending_;        // the best paying change, waiting for patience
  int pending_for_ = 0;        // consecutive iterations it has been the best
};

}  // namespace parashift::core
