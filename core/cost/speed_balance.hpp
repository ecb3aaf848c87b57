// A plan on a cluster where some GPUs compute slower than the rest (a
// fail-slow GPU, a throttled node, an older part): what the balance module
// makes of it, in the cost model's terms, so the planner, the replan module
// and the oracle can compare plans on such a cluster.
//
// Rank r runs on GPU r (core/rank_layout.hpp's order). A worker (a
// tensor- and context-parallel group, in lockstep) runs at the pace of its
// slowest GPU; a replica's pipeline runs at the pace of its slowest stage,
// each stage once in its fill and drain. With a healthy micro-batch taking
// t on a stage, a replica r of m micro-batches takes
//     T_r(m) = t * (f_r * m + beta * a_r)
// where f_r is its slowest stage's slowdown, a_r the mean over its stages
// of theirs, and beta = bubble / t the plan's fill and drain in micro-batch
// times (the estimate's bubble; 0 without a pipeline). The balance module
// (core/controller/balancer.hpp) re-balances micro-batches between
// replicas: here each replica gets m_r >= step (a whole group of pp
// micro-batches under interleaving, 1 otherwise) so that max_r T_r(m_r) is
// least, the global batch kept; FSDP over dp > 1 keeps every replica's
// count equal (ParallelPlan::replicas_may_differ). The re-partition of
// layers between stages is not modelled: it helps only when every replica
// is slow on the same stage.
#pragma once

#include <vector>

#include "core/cost/estimate.hpp"
#include "core/parallel_plan.hpp"

namespace parashift::core {

/// A GPU whose compute takes `factor` (> 1) times its nominal time.
struct SlowGpu {
  int gpu = 0;
  double factor = 1;
  friend bool operator==(const SlowGpu&, const SlowGpu&) = default;
};

struct SpeedBalance {
  /// Micro-batches of each replica (dp entries summing to the plan's
  /// total); empty when no replica is slow or the plan cannot re-balance.
  std::vector<int> micro_batches_per_replica;
  /// The critical path's passes and bubble over the healthy plan's: 1 when
  /// no GPU the plan uses is slow.
  double stretch = 1;
};

/// The balanced shares and stretch of `plan` with `slow` GPUs (GPUs beyond
/// the plan's ranks ignored), from the healthy estimate's passes and
/// bubble. Allocation-free when `slow` is empty; otherwise O(s log s +
/// c^2 log M) for s slow GPUs, c distinct replica paces and M micro-batches
/// (the shares: O(dp log dp) more).
SpeedBalance balance_by_speed(const ParallelPlan& plan, const IterationEstimate& healthy,
                              const std::vector<SlowGpu>& slow);

/// `healthy` with its critical path's passes and bubble stretched by
/// balance_by_speed's stretch (forward, backward, recompute and bubble
/// each scaled; total, MFU and tokens/s follow).
IterationEstimate with_slow_gpus(const IterationEstimate& healthy, const ParallelPlan& plan,
                                 const std::vector<SlowGpu>& slow);

/// The slow GPUs of a per-GPU slowdown vector (1 = nominal), ascending.
std::vector<SlowGpu> slow_gpus_of(const std::vector<double>& gpu_slowdown);

}  // namespace parashift::core
