// A plan on a cluster whose GPUs do not all compute at the device's pace (a
// fail-slow GPU, a throttled node, a group of another device type): what
// the balance module makes of it, in the cost model's terms, so the
// planner, the replan module and the oracle can compare plans on such a
// cluster.
//
// Rank r runs on GPU r (core/rank_layout.hpp's order). A worker (a
// tensor- and context-parallel group, in lockstep) runs at the pace of its
// slowest GPU; a replica's pipeline runs at the pace of its slowest stage,
// each stage once in its fill and drain. With a micro-batch taking t on a
// stage at the device's pace, a replica r of m micro-batches takes
//     T_r(m) = t * (f_r * m + beta * a_r)
// where f_r is its slowest stage's factor (compute time over the device's:
// > 1 slower, < 1 faster), a_r the mean over its stages of theirs, and beta = bubble / t the plan's
// fill and drain in micro-batch times (the estimate's bubble; 0 without a pipeline). The balance
// module (core/controller/balancer.hpp) re-balances micro-batches between replicas: here each
// replica gets m_r >= step (a whole group of pp micro-batches under interleaving, 1 otherwise) so
// that max_r T_r(m_r) is least, the global batch kept; FSDP over dp > 1 keeps every replica's count
// equal (ParallelPlan::replicas_may_differ). The re-partition of layers between stages is not
// modelled: it helps only when every replica is slow on the same stage.
#pragma once

#include <vector>

#include "core/cost/estimate.hpp"
#include "core/parallel_plan.hpp"

namespace parashift::core {

/// A GPU whose compute takes `factor` times the device's time (> 1: slower,
/// < 1: faster; a GPU not listed is at 1). Lists of them are ascending by
/// GPU, each GPU once (gpu_factors_of, merge_factors and group_factors
/// make them so; the functions below assert it).
struct GpuFactor {
  int gpu = 0;
  double factor = 1;
  friend bool operator==(const GpuFactor&, const GpuFactor&) = default;
};

struct SpeedBalance {
  /// Micro-batches of each replica (dp entries summing to the plan's
  /// total); empty when every GPU the plan uses is at 1 or the plan cannot
  /// re-balance.
  std::vector<int> micro_batches_per_replica;
  /// The critical path's passes and bubble over the plan's at the device's
  /// pace: 1 when every GPU the plan uses is at 1.
  double stretch = 1;
  /// The micro-batches of the replica that finishes last over the even
  /// share: its tensor-, context- and pipeline-parallel transfers, one set
  /// per micro-batch, scale by it.
  double share = 1;
};

/// The replicas of a layout not at the device's pace, and their distinct
/// paces: all balance_by_speed needs of the GPU factors. It depends on the
/// plan's tp, cp, dp and pp only, so the planner computes it once per
/// layout and reuses it across that layout's plans.
struct ReplicaPaces {
  /// A replica's pace: its slowest stage's factor and the mean of its stages'.
  struct Pace {
    int replica = -1;  // -1: the replicas at the device's pace
    double slowest = 1;
    double mean = 1;
  };
  /// `count` replicas of one pace.
  struct Class {
    Pace pace;
    long long count = 0;
  };
  std::vector<Pace> replicas;  // ascending by replica; empty: all at the device's pace
  std::vector<Class> classes;  // the device's pace first when some replica runs at it
};
ReplicaPaces replica_paces(const ParallelPlan& plan, const std::vector<GpuFactor>& gpus);

/// The balanced shares and stretch of `plan` with `gpus` at their factors
/// (GPUs beyond the plan's ranks ignored), from the estimate's passes and
/// bubble at the device's pace. Allocation-free when `gpus` is empty;
/// otherwise O(s + dp + c^2 log M) for s listed GPUs, c distinct replica
/// paces and M micro-batches (the shares: O(dp log dp) more).
SpeedBalance balance_by_speed(const ParallelPlan& plan, const IterationEstimate& healthy,
                              const std::vector<GpuFactor>& gpus);

/// `healthy` with its critical path's passes and bubble stretched by
/// balance_by_speed's stretch and its per-micro-batch transfers (tp, cp,
/// pp) by its share; total, MFU and tokens/s follow.
IterationEstimate with_gpu_factors(const IterationEstimate& healthy, const ParallelPlan& plan,
                                   const std::vector<GpuFactor>& gpus);
/// The same from the layout's paces (replica_paces of the same tp, cp, dp, pp).
IterationEstimate with_replica_paces(const IterationEstimate& healthy, const ParallelPlan& plan,
                                     const ReplicaPaces& paces);

/// The GPUs not at 1 of a per-GPU factor vector, ascending.
std::vector<GpuFactor> gpu_factors_of(const std::vector<double>& gpu_slowdown);
/// Two ascending lists as one: a GPU in both gets the product.
std::vector<GpuFactor> merge_factors(const std::vector<GpuFactor>& a,
                                     const std::vector<GpuFactor>& b);

}  // namespace parashift::core
