// Collectives as coflows on the FlowNetwork. A collective is a sequence of
// phases; a phase is a set of independent chains run concurrently and ends
// when all of them have; a chain is a sequence of rounds, and a round starts
// its flows together and ends when the last has arrived (the next round
// starts then). Contention with anything else on the network, and between
// the flows of the collective itself, comes from max-min sharing.
//
// `bytes` is the per-rank buffer as nccl-tests counts it (the full vector for
// all-reduce; the output for all-gather, the input for reduce-scatter; the
// whole send buffer for all-to-all).
//
//  Ring (NCCL's ring; ranks in `gpus` order): all-reduce = reduce-scatter
//    then all-gather, 2(n-1) rounds of bytes/n from every rank to the next;
//    reduce-scatter, all-gather: n-1 rounds. With no contention this is
//    exactly ring_wire_ns (sim/collective.hpp): the wire-level algorithms,
//    without NCCL's latency and protocol efficiency (core/cost/nccl_model.hpp).
//    All-to-all: n-1 rounds; in round k rank i sends bytes/n to rank i+k.
//  AllPairs (all-to-all only): all n(n-1) flows of bytes/n at once; sharing
//    decides who waits; latency is paid once instead of n-1 times.
//  DoubleBinaryTree (all-reduce only): NCCL's two trees (core/cost/nccl_tree.hpp),
//    each carrying bytes/2, cut into `pipeline_chunks` chunks. Simplified
//    pipelining: with tree height D, a chunk is reduced up one tree level
//    per round (deepest level first) and broadcast down one level per round,
//    2D stages; round r runs stage s of chunk r-s for every s, in both
//    trees, so there are chunks + 2D - 1 rounds, each a barrier across both
//    trees. NCCL pipelines per chunk without global barriers and splits
//    intra-node chains from the inter-node tree; this model keeps the
//    bandwidth term (each tree edge carries bytes/2 each way) and charges
//    (chunks + 2D - 1) latencies.
//  Hierarchical (all-reduce only): `gpus` is host-major, `gpus_per_host`
//    consecutive ranks per host. Phase 1: ring reduce-scatter inside every
//    host (bytes, concurrently on all hosts); phase 2: ring all-reduce of
//    bytes/gpus_per_host among the ranks of equal local index, one ring per
//    local index, concurrently; phase 3: ring all-gather inside every host.
//  SendRecv (any algorithm): `gpus` = {src, dst}; one flow of `bytes`.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/cost/work_profile.hpp"
#include "sim/network/flow_network.hpp"

namespace parashift::sim {

enum class CollectiveAlgorithm { Ring, AllPairs, DoubleBinaryTree, Hierarchical };
const char* to_string(CollectiveAlgorithm algorithm);

struct CollectiveSpec {
  core::CollectiveKind kind = core::CollectiveKind::AllReduce;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::Ring;
  double bytes = 0;
  std::vector<int> gpus;        // ranks in ring / tree order (GPU indices)
  int gpus_per_host = 0;        // Hierarchical: ranks per host, divides gpus.size()
  int pipeline_chunks = 8;      // DoubleBinaryTree: chunks per tree, >= 1
  std::uint64_t flow_hash = 0;  // ECMP hash for all of the collective's flows
  core::TrafficClass traffic = core::TrafficClass::Other;  // every flow's class
};

/// Starts the collective now; `on_done(t_ns)` runs when its last flow has
/// arrived (from a kernel event, also for an empty collective: n <= 1 or
/// bytes <= 0). Throws std::invalid_argument for a kind the algorithm does
/// not implement, a GPU listed twice, a bad gpus_per_host or pipeline_chunks.
void run_collective(FlowNetwork& network, const CollectiveSpec& spec,
                    std::function<void(TimeNs done_ns)> on_done);

/// nccl-tests' algorithm bandwidth: bytes / duration.
double algbw_Bps(double bytes, TimeNs duration_ns);
/// nccl-tests' bus bandwidth: algbw x bus_factor(kind, ranks) (sim/collective.hpp:
/// all-reduce 2(n-1)/n; reduce-scatter, all-gather, all-to-all (n-1)/n; send/recv 1).
double busbw_Bps(core::CollectiveKind kind, int ranks, double bytes, TimeNs duration_ns);

}  // namespace parashift::sim
