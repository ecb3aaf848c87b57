// A collective on the flow network as NCCL runs it on the group: the
// algorithm NCCL's tuner picks on the uncontended links (core::nccl_collective)
// decides the shape of the flows. A tree all-reduce between nodes (tree, or
// NVLS-tree beyond one node) sends along NCCL's double binary trees
// (tree_coflow.hpp); everything else goes around the ring (ring_coflow.hpp).
// Both size their flows so that alone on the network they take NCCL's
// bandwidth term, then add its latency term; under contention the flows
// share links max-min fairly, so a loaded or degraded link slows the
// collective only if the algorithm's edges cross it.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/cost/nccl_model.hpp"
#include "core/cost/work_profile.hpp"
#include "core/traffic_class.hpp"
#include "sim/network/flow_network.hpp"

namespace parashift::sim {

/// What NCCL's model says of the group on the uncontended graph: its links
/// (read off the ring neighbours' routes, sim::group_links_from) and the
/// chosen algorithm's time.
struct CoflowModel {
  core::GroupLinks links;
  core::NcclTime nccl;
};
CoflowModel coflow_model(const topo::Topology& topology, const core::NcclFabric& fabric,
                         core::CollectiveKind kind, double bytes, const std::vector<int>& gpus,
                         std::uint64_t flow_hash);

/// Whether NCCL runs this collective as a tree between nodes.
bool runs_as_tree(const CoflowModel& model, core::CollectiveKind kind);

/// Starts the collective now in the shape NCCL's choice gives it;
/// `on_done(t_ns)` runs when it has finished. Returns whether it runs as
/// trees between nodes (runs_as_tree).
bool start_collective_coflow(FlowNetwork& network, const core::NcclFabric& fabric,
                             core::CollectiveKind kind, double bytes, const std::vector<int>& gpus,
                             std::uint64_t flow_hash, std::function<void(TimeNs done_ns)> on_done,
                             core::TrafficClass traffic = core::TrafficClass::Other);

}  // namespace parashift::sim
