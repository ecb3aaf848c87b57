// A ring collective as one round of fluid flows: each rank streams to its
// ring neighbour everything the ring would pass it over all its steps, and
// the latency follows once the flows are done. Sizes and latency come from
// NCCL's model (core/cost/nccl_model.hpp) on the uncontended links: every
// flow is scaled by (NCCL's bandwidth term) / (the wire ring's bandwidth
// term), and NCCL's latency term follows the flows (less the path latency
// the flows already carry). Alone on the network this equals
// ring_collective_ns (sim/collective.hpp) whenever the slowest pair also has
// the longest path; under contention the flows share links max-min fairly.
// It trades the 2(n-1) per-step barriers of run_collective's Ring for 2(n-1)
// times fewer network events, which is what lets a 16,384-GPU iteration run
// in seconds. A flow to a GPU on another node starts at the sender's node's
// GPU on the receiver's rail (PXN, sim/collective.hpp pxn_source): the
// NVLink leg is not simulated, the rail leg is.
//   all-reduce: 2(n-1)/n x bytes per wire flow; reduce-scatter, all-gather:
//   (n-1)/n x bytes; send/recv (a ring exchange): bytes.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "sim/network/nccl_coflow.hpp"

namespace parashift::sim {

/// Starts the collective now around the ring; `on_done(t_ns)` runs when it
/// has finished. `model`: coflow_model of the same group, kind and bytes.
/// Kinds: AllReduce, ReduceScatter, AllGather, SendRecv (others throw
/// std::invalid_argument).
void start_ring_coflow(FlowNetwork& network, const CoflowModel& model, core::CollectiveKind kind,
                       double bytes, const std::vector<int>& gpus, std::uint64_t flow_hash,
                       std::function<void(TimeNs done_ns)> on_done, core::TrafficClass traffic);

}  // namespace parashift::sim
