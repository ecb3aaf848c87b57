#include "core/cost/fsdp.hpp"

#include <algorithm>

#include "core/cost/estimate.hpp"
#include "core/cost/overlap.hpp"
#include "core/cost/work_profile.hpp"

namespace parashift::core {

FsdpGroups fsdp_groups(const ParallelPlan& plan, int dp_per_node) {
  FsdpGroups g;
  g.shard = std::max(1, plan.shard_degree());
  g.replicas = std::max(1, plan.dp / g.shard);
  const int per_node = std::max(1, dp_per_node);
  g.shard_per_node = std::min(g.shard, per_node);
  g.replica_per_node = std::max(1, per_node / g.shard);
  return g;
}

FsdpComm fsdp_comm_of(const ClusterView& cluster, const FsdpGroups& groups, double layer_params,
                      double other_params, double grad_bytes_per_param) {
  auto ns = [&](CollectiveKind kind, double bytes) -> TimeNs {
    return bytes > 0 && groups.shard > 1
               ? collective_ns(kind, bytes, groups.shard, groups.shard_per_node, cluster)
               : 0;
  };
  return {ns(CollectiveKind::AllGather, layer_params * 2.0),
          ns(CollectiveKind::ReduceScatter, layer_params * grad_bytes_per_param),
          ns(CollectiveKind::AllGather, other_params * 2.0),
          ns(CollectiveKind::ReduceScatter, other_params * grad_bytes_per_param)};
}

TimeNs hsdp_replica_sync_ns(const ClusterView& cluster, const FsdpGroups& groups, double params,
                            double grad_bytes_per_param) {
  if (groups.replicas < 2 || params <= 0) return 0;
  return collective_ns(CollectiveKind::AllReduce, params * grad_bytes_per_param / groups.shard,
                       groups.replicas, groups.replica_per_node, cluster);
}

double embedding_params_on_gpu(bool tied_embeddings, double params_per_gpu_embedding, bool first,
                               bool last) {
  const int copies = tied_embeddings ? (first || last ? 1 : 0) : (first ? 1 : 0) + (last ? 1 : 0);
  return copies * params_per_gpu_embedding;
}

double stage_params_on_gpu(const WorkProfile& profile, bool tied_embeddings, double layers,
                           bool first, bool last) {
  return layers * profile.params_per_gpu_layer +
         embedding_params_on_gpu(tied_embeddings, profile.params_per_gpu_embedding, first, last);
}

TimeNs fsdp_forward_comm_ns(const FsdpComm& c, TimeNs layers) {
  return layers * c.gather_ns + c.other_gather_ns;
}

TimeNs fsdp_backward_comm_ns(const FsdpComm& c, TimeNs layers) {
  return layers * (c.gather_ns + c.scatter_ns) + c.other_gather_ns + c.other_scatter_ns;
}

TimeNs fsdp_comm_ns(const FsdpComm& c, TimeNs layers) {
  return fsdp_forward_comm_ns(c, layers) + fsdp_backward_comm_ns(c, layers);
}

TimeNs fsdp_forward_exposed_ns(const FsdpComm& c, TimeNs layers, TimeNs layer_ns, TimeNs passes) {
  passes = std::clamp<TimeNs>(passes, 0, layers);
  return passes * c.gather_ns + c.other_gather_ns +
         (layers - passes) * overlapped_exposed_ns(c.gather_ns, layer_ns);
}

TimeNs fsdp_backward_exposed_ns(const FsdpComm& c, TimeNs layers, TimeNs layer_ns, TimeNs passes) {
  passes = std::clamp<TimeNs>(passes, 0, layers);
  return passes * c.scatter_ns + c.other_scatter_ns +
         (layers - passes) * overlapped_exposed_ns(c.gather_ns + c.scatter_ns, layer_ns);
}

}  // namespace parashift::core
