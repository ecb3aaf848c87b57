#include "core/scenario/cluster_view.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <string>

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

bool starts_with(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}

enum class Generation { Other, Volta, Ampere, Hopper, Blackwell };

// The GPU generation of a device, from its name's prefix (any case).
Generation generation_of(const DeviceSpec& device) {
  std::string name = device.name;
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (starts_with(name, "b200") || starts_with(name, "gb200")) return Generation::Blackwell;
  if (starts_with(name, "h100") || starts_with(name, "h200")) return Generation::Hopper;
  if (starts_with(name, "a100") || starts_with(name, "a800")) return Generation::Ampere;
  if (starts_with(name, "v100")) return Generation::Volta;
  return Generation::Other;
}

// NVLink SHARP needs third-generation NVSwitch: Hopper and later.
bool has_nvlink_sharp(const DeviceSpec& device) {
  const Generation g = generation_of(device);
  return g == Generation::Hopper || g == Generation::Blackwell;
}

// NCCL's LL bandwidth cap on one node by GPU generation (llMaxBws, GB/s).
double ll_max_node_Bps(const DeviceSpec& device) {
  switch (generation_of(device)) {
    case Generation::Blackwell:
      return 282.0e9;
    case Generation::Hopper:
      return 141.0e9;
    case Generation::Ampere:
      return 87.7e9;
    case Generation::Volta:
      return 39.0e9;
    case Generation::Other:
      break;
  }
  return 0.0;
}

int nics_on_host0(const topo::Topology& t) {
  int nics = 0;
  for (int v = 0; v < t.node_count(); ++v) {
    const auto& node = t.node(v);
    if (node.kind == topo::NodeKind::Nic && node.host == 0) ++nics;
  }
  return nics;
}

}  // namespace

NcclFabric nccl_fabric_of(const DeviceSpec& device, int gpus_per_node, int nics_per_node) {
  NcclFabric f;
  f.nvlink_sharp = gpus_per_node > 1 && device.nvlink_Bps > 0 && has_nvlink_sharp(device);
  f.nics_per_node = std::max(1, nics_per_node);
  f.ll_max_node_Bps = ll_max_node_Bps(device);
  return f;
}

ClusterView cluster_view_of(const topo::Topology& topology, const DeviceSpec& device,
                            NcclAlgo algo) {
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
  const int nics = nics_on_host0(topology);
  view.nccl = nccl_fabric_of(device, view.gpus_per_node, nics > 0 ? nics : view.gpus_per_node);
  view.nccl.algo = algo;
  return view;
}

ClusterView cluster_view_of(const DeviceSpec& device, int gpus, int gpus_per_node) {
  ClusterView view;
  view.gpus = gpus;
  view.gpus_per_node = std::max(1, gpus_per_node);
  view.intra_node_Bps = device.nvlink_Bps;
  view.inter_node_Bps = device.nic_Bps;
  view.nccl = nccl_fabric_of(device, view.gpus_per_node, view.gpus_per_node);
  return view;
}

}  // namespace parashift::core
