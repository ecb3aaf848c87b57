#include "core/cost/estimate.hpp"
#include "core/rank_layout.hpp"

namespace parashift::core {

GroupLinks group_links(const ClusterView& cluster, int ranks, int ranks_per_node) {
  GroupLinks g;
  g.ranks = ranks;
  g.ranks_per_node = ranks_per_node < 1 ? 1 : (ranks_per_node > ranks ? ranks : ranks_per_node);
  g.intra_Bps = cluster.intra_node_Bps;
  g.inter_Bps = cluster.inter_node_Bps;
  g.intra_wire_ns = cluster.intra_node_latency_ns;
  g.inter_wire_ns = cluster.inter_node_latency_ns;
  return g;
}

double megatron_bucket_params(int dp) {
  return dp * 1e6 > 40e6 ? dp * 1e6 : 40e6;
}

TimeNs collective_ns(CollectiveKind kind, double bytes, int ranks, int ranks_per_node,
                     const ClusterView& cluster, NcclAlgo algo) {
  if (ranks <= 1 || bytes <= 0.0) return 0;
  return nccl_collective(cluster.nccl, kind, bytes, group_links(cluster, ranks, ranks_per_node),
                         algo)
      .time_ns;
}

GroupPlacement group_placement(const ParallelPlan& plan, int gpus_per_node) {
  GroupPlacement g;
  const int gpn = gpus_per_node > 0 ? gpus_per_node : 1;
  auto fit = [gpn](int size, int stride) {
    const int per_node = gpn / stride;
    return per_node < 1 ? 1 : (size < per_node ? size : per_node);
  };
  g.tp_per_node = fit(plan.tp, 1);
  g.cp_per_node = fit(plan.cp, plan.tp);
  const RankLayout layout(plan);
  g.dp_per_node = fit(plan.dp, layout.dp_stride());
  // Some hop of the pipeline leaves the node once the pipeline spans nodes.
  g.pp_crosses_nodes = plan.pp > 1 && layout.pp_stride() * plan.pp > gpn;
  return g;
}

}  // namespace parashift::core
