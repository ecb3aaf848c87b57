// Collectives on the path model, as NCCL runs them: the group's links are
// read off the routes between ring neighbours (bottleneck rate and wire
// latency inside a node and between nodes, ranks per node from the hosts)
// and priced by the cost model's own formula (core/cost/nccl_model.hpp), so
// a simulated collective and the analytical one agree wherever the graph
// matches the two-level view. ring_wire_ns is the bare wire model the
// flow-level algorithms of sim/network/collectives.hpp reproduce:
//   all-reduce: 2(n-1) steps of bytes/n; reduce-scatter, all-gather: n-1;
//   all-to-all: n-1 steps of bytes/n, each to a different peer;
//   send/recv: one step in which every rank sends all `bytes` to its neighbour;
// every step waits for the slowest neighbour pair.
#pragma once

#include <algorithm>
#include <limits>
#include <unordered_map>
#include <vector>

#include "core/cost/nccl_model.hpp"
#include "core/cost/work_profile.hpp"
#include "sim/path_model.hpp"

namespace parashift::sim {

/// PXN (NCCL's PCI x NVLink): data for a GPU on another node leaves through
/// the NIC of the destination's rail, reached over NVLink, so rails are not
/// double-booked and cross-rail traffic never climbs to the spines. The
/// source of the network leg from `a` to `b`: the GPU of a's node with b's
/// local index (GPUs numbered node by node), or `a` itself inside a node.
inline int pxn_source(const topo::Topology& t, int a, int b) {
  const int per_host = t.gpus_per_host();
  const int host_a = t.host_of_gpu(a);
  if (per_host <= 0 || host_a == t.host_of_gpu(b)) return a;
  const int candidate = host_a * per_host + b % per_host;
  if (candidate < t.gpu_count() && t.host_of_gpu(candidate) == host_a) return candidate;
  return a;
}

/// The links a group in `gpus` order sees: ranks per node from the hosts;
/// for ring neighbours inside a node and between nodes the lowest bottleneck
/// rate and the longest wire latency of `route(a, b)` (a PathInfo; between
/// nodes the network leg from pxn_source(a, b)).
template <class RouteFn>
core::GroupLinks group_links_from(const topo::Topology& t, const std::vector<int>& gpus,
                                  RouteFn route) {
  const int n = static_cast<int>(gpus.size());
  core::GroupLinks g;
  g.ranks = n;
  std::unordered_map<int, int> per_host;
  for (const int gpu : gpus) {
    g.ranks_per_node = std::max(g.ranks_per_node, ++per_host[t.host_of_gpu(gpu)]);
  }
  g.fewest_per_node = g.ranks_per_node;
  for (const auto& [host, count] : per_host) g.fewest_per_node = std::min(g.fewest_per_node, count);
  constexpr double kNone = std::numeric_limits<double>::infinity();
  double intra = kNone;
  double inter = kNone;
  for (int i = 0; i < n && n > 1; ++i) {
    const int a = gpus[i];
    const int b = gpus[(i + 1) % n];
    const bool same_host = t.host_of_gpu(a) == t.host_of_gpu(b);
    const PathInfo p = route(same_host ? a : pxn_source(t, a, b), b);
    double& rate = same_host ? intra : inter;
    TimeNs& wire = same_host ? g.intra_wire_ns : g.inter_wire_ns;
    rate = std::min(rate, p.bottleneck_Bps);
    wire = std::max(wire, p.latency_ns);
  }
  g.intra_Bps = intra == kNone ? 0.0 : intra;
  g.inter_Bps = inter == kNone ? 0.0 : inter;
  return g;
}

/// The same on the path model.
core::GroupLinks group_links_of(const PathModel& paths, const std::vector<int>& gpus);

/// One collective over `gpus` (in ring order) as NCCL runs it on this fabric.
core::NcclTime nccl_collective_on(const PathModel& paths, const core::NcclFabric& fabric,
                                  core::CollectiveKind kind, double bytes,
                                  const std::vector<int>& gpus,
                                  core::NcclAlgo algo = core::NcclAlgo::Auto);

/// Its duration.
TimeNs ring_collective_ns(const PathModel& paths, const core::NcclFabric& fabric,
                          core::CollectiveKind kind, double bytes, const std::vector<int>& gpus);

/// The bare wire-level ring (no NCCL latency or protocol efficiency).
TimeNs ring_wire_ns(const PathModel& paths, core::CollectiveKind kind, double bytes,
                    const std::vector<int>& gpus);

/// nccl-tests' bus-bandwidth factor for `kind` over n ranks (core::nccl_bus_factor).
double bus_factor(core::CollectiveKind kind, int ranks);

}  // namespace parashift::sim
