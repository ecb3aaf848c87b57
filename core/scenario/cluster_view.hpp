// The analytical cost model's two-level view of a topology graph.
#pragma once

#include "core/cost/cluster_view.hpp"
#include "core/device_spec.hpp"
#include "topologies/topology.hpp"

namespace parashift::core {

/// GPUs per host from the graph; intra-node bandwidth and latency from the
/// route between the first two GPUs of host 0, inter-node from the route
/// between GPU 0 and the first GPU of host 1 (bottleneck link, summed
/// latency). With one host the inter-node figures fall back to the device's NIC.
ClusterView cluster_view_of(const topo::Topology& topology, const DeviceSpec& device);

}  // namespace parashift::core
