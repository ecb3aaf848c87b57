// NCCL's tree all-reduce between nodes as one round of fluid flows: every
// edge of every channel's two trees (core::nccl_tree_flows) carries its
// share both ways at once (the reduce up and the broadcast down pipeline
// chunk by chunk, so in a fluid model they overlap). The flows are scaled
// so that alone the coflow takes NCCL's bandwidth term: the busiest GPU's
// bytes in or out over the group's slowest route between nodes, the same
// normalisation the ring coflow makes. NCCL's latency term follows the
// flows (less the path latency they already carry). Inside a node the
// chain over NVLink is not simulated, as the ring's PXN leg is not.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "sim/network/nccl_coflow.hpp"

namespace parashift::sim {

/// Starts the tree now on `gpus` (in ring order: the nodes are their hosts
/// in the order the ring reaches them); `on_done(t_ns)` runs when it has
/// finished. `model`: coflow_model of the same group and bytes.
void start_tree_coflow(FlowNetwork& network, const CoflowModel& model, double bytes,
                       const std::vector<int>& gpus, std::uint64_t flow_hash,
                       std::function<void(TimeNs done_ns)> on_done, core::TrafficClass traffic);

}  // namespace parashift::sim
