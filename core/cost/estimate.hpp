// The analytical estimate of one training iteration for a plan.
#pragma once

#include "core/cost/cluster_view.hpp"
#include "core/cost/cost_options.hpp"
#include "core/cost/memory.hpp"
#include "core/cost/work_profile.hpp"
#include "core/device_spec.hpp"
#include "core/model_spec.hpp"
#include "core/parallel_plan.hpp"
#include "core/units.hpp"

namespace parashift::core {

/// Iteration time broken down on the critical path of the slowest rank.
/// total_ns = forward + backward + recompute + tp_comm + cp_comm + pp_comm +
///            bubble + dp_comm_exposed + optimizer.
struct IterationEstimate {
  TimeNs total_ns = 0;
  TimeNs forward_ns = 0;
  TimeNs backward_ns = 0;
  TimeNs recompute_ns = 0;
  TimeNs tp_comm_ns = 0;          // tensor (and sequence) parallel collectives, exposed
  TimeNs cp_comm_ns = 0;          // context-parallel exchange, exposed
  TimeNs pp_comm_ns = 0;          // pipeline sends on the critical path
  TimeNs bubble_ns = 0;           // pipeline fill and drain
  TimeNs dp_comm_ns = 0;          // data-parallel gradient sync, whole duration
  TimeNs dp_comm_exposed_ns = 0;  // ... not hidden behind backward
  TimeNs optimizer_ns = 0;
  MemoryEstimate memory;
  double model_flops = 0;  // per iteration, whole job
  double mfu = 0;          // model_flops / (total time * gpus * peak)
  double tokens_per_s = 0;
  double bubble_share() const {
    return total_ns > 0 ? static_cast<double>(bubble_ns) / static_cast<double>(total_ns) : 0.0;
  }
};

/// Time of one collective of `bytes` per rank (nccl-tests' size) over `ranks` ranks,
/// `ranks_per_node` of which share a node, as NCCL runs it (core/cost/nccl_model.hpp:
/// algorithm and protocol chosen by size unless `algo` forces one).
TimeNs collective_ns(CollectiveKind kind, double bytes, int ranks, int ranks_per_node,
                     const ClusterView& cluster, NcclAlgo algo = NcclAlgo::Auto);
/// Parameters per data-parallel gradient bucket: Megatron's DDP default,
/// max(40M, 1M x dp).
double megatron_bucket_params(int dp);
/// The links such a group sees in `cluster` (ranks_per_node clamped to [1, ranks]).
GroupLinks group_links(const ClusterView& cluster, int ranks, int ranks_per_node);

/// Ranks of each group that share a node under the tp-cp-dp-pp rank order
/// (tp fastest; a node holds gpus_per_node consecutive ranks).
struct GroupPlacement {
  int tp_per_node = 1;
  int cp_per_node = 1;
  int dp_per_node = 1;
  bool pp_crosses_nodes = false;  // some pipeline hop (tp*cp*dp ranks apart) leaves a node
};
GroupPlacement group_placement(const ParallelPlan& plan, int gpus_per_node);

/// The estimate under the default CostOptions. Allocation-free; the planner
/// calls it in its inner loop.
IterationEstimate estimate_iteration(const ModelSpec& model, const DeviceSpec& device,
                                     const ClusterView& cluster, const ParallelPlan& plan,
                                     int seq_len);
IterationEstimate estimate_iteration(const ModelSpec& model, const DeviceSpec& device,
                                     const ClusterView& cluster, const ParallelPlan& plan,
                                     int seq_len, const CostOptions& options);
/// The same from a profile already built with work_profile(..., options).
IterationEstimate estimate_iteration(const ModelSpec& model, const DeviceSpec& device,
                                     const ClusterView& cluster, const ParallelPlan& plan,
                                     const WorkProfile& profile, const CostOptions& options);

}  // namespace parashift::core
