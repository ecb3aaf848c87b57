#include "sim/network/nccl_coflow.hpp"

#include <limits>

#include "sim/collective.hpp"
#include "sim/network/ring_coflow.hpp"
#include "sim/network/tree_coflow.hpp"

namespace parashift::sim {

CoflowModel coflow_model(const topo::Topology& topology, const core::NcclFabric& fabric,
                         core::CollectiveKind kind, double bytes, const std::vector<int>& gpus,
                         std::uint64_t flow_hash) {
  // The group's uncontended links, read as sim/collective.cpp reads paths.
  auto route = [&topology, flow_hash](int a, int b) {
    PathInfo r;
    r.bottleneck_Bps = std::numeric_limits<double>::infinity();
    for (const topo::LinkId id : topology.route(a, b, flow_hash)) {
      r.bottleneck_Bps = std::min(r.bottleneck_Bps, topology.link(id).bandwidth_Bps);
      r.latency_ns += topology.link(id).latency_ns;
    }
    return r;
  };
  CoflowModel m;
  m.links = group_links_from(topology, gpus, route);
  m.nccl = core::nccl_collective(fabric, kind, bytes, m.links);
  return m;
}

bool runs_as_tree(const CoflowModel& model, core::CollectiveKind kind) {
  const bool tree_algo =
      model.nccl.algo == core::NcclAlgo::Tree || model.nccl.algo == core::NcclAlgo::Nvls;
  return kind == core::CollectiveKind::AllReduce && tree_algo && model.links.nodes() > 1;
}

bool start_collective_coflow(FlowNetwork& network, const core::NcclFabric& fabric,
                             core::CollectiveKind kind, double bytes, const std::vector<int>& gpus,
                             std::uint64_t flow_hash, std::function<void(TimeNs done_ns)> on_done,
                             core::TrafficClass traffic) {
  const CoflowModel model = coflow_model(network.topology(), fabric, kind, bytes, gpus, flow_hash);
  const bool tree = runs_as_tree(model, kind);
  if (tree)
    start_tree_coflow(network, model, bytes, gpus, flow_hash, std::move(on_done), traffic);
  else
    start_ring_coflow(network, model, kind, bytes, gpus, flow_hash, std::move(on_done), traffic);
  return tree;
}

}  // namespace parashift::sim
