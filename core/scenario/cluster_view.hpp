// The analytical cost model's two-level view of a topology graph, and the
// fabric's NCCL parameters: one construction for plan, simulate, faults,
// validate and collectives.
#pragma once

#include "core/cost/cluster_view.hpp"
#include "core/device_spec.hpp"
#include "topologies/topology.hpp"

namespace parashift::core {

/// NCCL's parameters for `device` in nodes of `gpus_per_node` GPUs with
/// `nics_per_node` rails (docs/collectives.md): the NcclFabric defaults, and
/// NVLink SHARP on Hopper and later parts (device name h100*, h200*, b200*,
/// gb200*) in nodes of more than one GPU.
NcclFabric nccl_fabric_of(const DeviceSpec& device, int gpus_per_node, int nics_per_node);

/// GPUs per host from the graph; intra-node bandwidth and latency from the
/// route between the first two GPUs of host 0, inter-node from the route
/// between GPU 0 and the first GPU of host 1 (bottleneck link, summed
/// latency). With one host the inter-node figures fall back to the device's
/// NIC. NICs per node: the graph's NICs on host 0 (one per GPU when it has
/// none). `algo`: the scenario's `cluster.nccl_algo` (NcclFabric::algo).
ClusterView cluster_view_of(const topo::Topology& topology, const DeviceSpec& device,
                            NcclAlgo algo = NcclAlgo::Auto);

/// The same view without a graph: `gpus` in nodes of `gpus_per_node`, the
/// device's NVLink and NIC rates, one NIC per GPU, no wire latency (the
/// NCCL hop latencies dominate). validate's published runs use it.
ClusterView cluster_view_of(const DeviceSpec& device, int gpus, int gpus_per_node);

}  // namespace parashift::core
