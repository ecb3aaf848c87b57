#include "core/cost/estimate.hpp"

namespace parashift::core {

TimeNs collective_ns(CollectiveKind kind, double bytes, int ranks, int ranks_per_node,
                     const ClusterView& cluster) {
  if (ranks <= 1 || bytes <= 0.0) return 0;
  // A ring that leaves the node runs at the NIC rate of each GPU (rails give
  // one NIC per GPU); inside a node at NVLink rate.
  const bool crosses_nodes = ranks_per_node < ranks;
  const double rate_Bps = crosses_nodes ? cluster.inter_node_Bps : cluster.intra_node_Bps;
  const TimeNs step_latency_ns =
      crosses_nodes ? cluster.inter_node_latency_ns : cluster.intra_node_latency_ns;
  const double n = ranks;
  double bus_factor = 1.0;
  TimeNs steps = 1;
  switch (kind) {
    case CollectiveKind::AllReduce:
      bus_factor = 2.0 * (n - 1.0) / n;
      steps = 2 * (ranks - 1);
      break;
    case CollectiveKind::ReduceScatter:
    case CollectiveKind::AllGather:
    case CollectiveKind::AllToAll:
      bus_factor = (n - 1.0) / n;
      steps = ranks - 1;
      break;
    case CollectiveKind::SendRecv:
      break;
  }
  return transfer_ns(bus_factor * bytes, rate_Bps) + steps * step_latency_ns;
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
  g.dp_per_node = fit(plan.dp, plan.tp * plan.cp);
  // Some hop of the pipeline leaves the node once the pipeline spans nodes.
  g.pp_crosses_nodes = plan.pp > 1 && plan.tp * plan.cp * plan.dp * plan.pp > gpn;
  return g;
}

}  // namespace parashift::core
