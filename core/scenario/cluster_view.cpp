#include "core/scenario/cluster_view.hpp"

#include <algorithm>
#include <limits>

namespace parashift::core {

namespace {

struct RouteSummary {
  double bottleneck_Bps = std::numeric_limits<double>::infinity();
  TimeNs latency_ns = 0;
};

RouteSummary summarise(const topo::Topology& t, int a, int b) {
  RouteSummary s;
  for (const topo::LinkId id : t.route(a, b)) {
    s.bottleneck_Bps = std::min(s.bottleneck_Bps, t.link(id).bandwidth_Bps);
    s.latency_ns += t.link(id).latency_ns;
  }
  return s;
}

}  // namespace

ClusterView cluster_view_of(const topo::Topology& topology, const DeviceSpec& device) {
  ClusterView view;
  view.gpus = topology.gpu_count();
  view.gpus_per_node = std::max(1, topology.gpus_per_host());
  view.intra_node_Bps = device.nvlink_Bps;
  view.inter_node_Bps = device.nic_Bps;
  if (view.gpus_per_node > 1 && view.gpus > 1) {
    const auto intra = summarise(topology, 0, 1);
    view.intra_node_Bps = intra.bottleneck_Bps;
    view.intra_node_latency_ns = intra.latency_ns;
  }
  if (view.gpus > view.gpus_per_node) {
    const auto inter = summarise(topology, 0, view.gpus_per_node);
    view.inter_node_Bps = inter.bottleneck_Bps;
    view.inter_node_latency_ns = inter.latency_ns;
  }
  return view;
}

}  // namespace parashift::core
