#include "core/cost/nccl_model.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <iterator>

namespace parashift::core {

namespace {

// NCCL's latency constants (microseconds), from its tuner's defaults
// (NVIDIA/nccl src/graph/tuning.cc, ncclTunerConstantsDefaults), indexed by
// protocol LL, LL128, Simple.
struct ProtoUs {
  double ll, ll128, simple;
  double of(NcclProto p) const {
    return p == NcclProto::LL ? ll : p == NcclProto::LL128 ? ll128 : simple;
  }
};
constexpr ProtoUs kRingBaseUs{6.6, 14.0, 8.4};  // per call: launch and set-up
constexpr ProtoUs kTreeBaseUs{6.8, 14.0, 8.4};
constexpr ProtoUs kRingNvlinkHopUs{0.6, 1.9, 3.4};  // one step over NVLink
constexpr ProtoUs kTreeNvlinkHopUs{0.6, 1.25, 4.0};
constexpr ProtoUs kRingNetHopUs{2.7, 4.0, 14.0};  // one step over the network
constexpr ProtoUs kTreeNetHopUs{5.0, 8.5, 14.0};
constexpr double kNvlsIntraUs = 25.0;       // NVLS, Simple only
constexpr double kNvlsTreeNetHopUs = 20.9;  // NVLS-tree level across nodes
constexpr double kNetOverheadUs = 1.0;      // per network post (x3 for Simple)

// Protocol bandwidth shares (same source): LL moves 4 data bytes per 8-byte
// line; LL128 120 of every 128 bytes (NCCL applies 0.92); a tree all-reduce
// reaches 0.92 of the ring's rate, LL on a tree 1/3.8, LL128 on a tree 7/9
// inside a node and 120/128 across nodes.
constexpr double kRingLLShare = 0.5;
constexpr double kRingLL128Share = 0.92;
constexpr double kTreeShare = 0.92;
constexpr double kTreeLLShare = 1.0 / 3.8;
// LL's bus-bandwidth cap across nodes (llMaxBws, Intel hosts): 2 nodes, more.
constexpr double kLLMaxTwoNodesBps = 39.0e9;
constexpr double kLLMaxManyNodesBps = 20.4e9;

constexpr NcclProto kProtos[] = {NcclProto::LL, NcclProto::LL128, NcclProto::Simple};

// NCCL's medium-size correction (src/graph/tuning.cc, treeCorrectionFactor:
// introduced in 2.6.4, these values since 2.10.3): "Trees are not perfectly
// sticking to the model for medium sizes", a share of the modelled bandwidth
// per power of two of bytes / 64, from 64 B (index 0) up; rows LL, LL128,
// Simple.
constexpr double kMediumSizeShare[3][24] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6,  .5,
     .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6,  .6,
     .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
     .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9}};

// The share above for `bytes`; 1 from index `end` up (NCCL applies the
// table to trees below index 23 and to NVLS-tree below 24).
double medium_size_share(NcclProto p, double bytes, int end) {
  static_assert(std::size(kMediumSizeShare[0]) == 24);
  end = std::min(end, 24);
  // Written so that a NaN size takes the full rate too.
  if (!(bytes >= 64.0) || !(bytes < 64.0 * static_cast<double>(std::uint64_t{1} << end)))
    return 1.0;
  const int index = static_cast<int>(std::bit_width(static_cast<std::uint64_t>(bytes / 64.0))) - 1;
  return kMediumSizeShare[static_cast<int>(p)][index];
}

double wire_us(TimeNs ns) {
  return static_cast<double>(ns) * 1e-3;
}

TimeNs us_to_ns(double us) {
  return us <= 0 ? 0 : static_cast<TimeNs>(std::llround(us * 1e3));
}

// NCCL's LL cap for a group over `nodes` nodes (0: none).
double ll_max_Bps(const NcclFabric& f, int nodes) {
  if (nodes <= 1) return f.ll_max_node_Bps;
  return nodes == 2 ? kLLMaxTwoNodesBps : kLLMaxManyNodesBps;
}

// `busbw_Bps` of protocol `p` under LL's cap `ll_max_Bps` (0: none).
double ll_capped(double busbw_Bps, NcclProto p, double ll_max_Bps) {
  return p == NcclProto::LL && ll_max_Bps > 0 ? std::min(busbw_Bps, ll_max_Bps) : busbw_Bps;
}

struct Rates {
  double nvlink_Bps = 0;    // one GPU's NVLink at the fabric's efficiency
  double net_node_Bps = 0;  // the group's NICs in one node, likewise
  double ring_Bps = 0;      // ring bus bandwidth, Simple protocol
  double ll_max_Bps = 0;    // LL protocol's bus-bandwidth cap (0: none)
};

Rates rates_of(const NcclFabric& f, const GroupLinks& g) {
  Rates r;
  r.nvlink_Bps = g.intra_Bps * f.nvlink_efficiency;
  r.ll_max_Bps = ll_max_Bps(f, g.nodes());
  const int nics = std::max(1, std::min(g.nic_ranks(), f.nics_per_node));
  r.net_node_Bps = nics * g.inter_Bps * f.nic_efficiency;
  const bool multi = g.ranks > g.ranks_per_node;
  if (!multi) {
    r.ring_Bps = r.nvlink_Bps;
  } else if (g.ranks_per_node == 1 || g.intra_Bps <= 0) {
    // No NVLink leg (one rank per node, or no ring neighbours share a node).
    r.ring_Bps = r.net_node_Bps;
  } else {
    r.ring_Bps = std::min(r.nvlink_Bps, r.net_node_Bps);
  }
  return r;
}

double log2_floor(int n) {
  int l = 0;
  while ((1 << (l + 1)) <= n) ++l;
  return l;
}

// One algorithm/protocol pair, kept in floating point until the fastest is
// known (the planner calls this in its inner loop).
struct Candidate {
  NcclAlgo algo = NcclAlgo::Ring;
  NcclProto proto = NcclProto::Simple;
  double latency_us = 0;
  double bandwidth_s = 0;
  double seconds() const { return latency_us * 1e-6 + bandwidth_s; }
};

// A ring-protocol time: `bus_Bps` is the Simple protocol's bus bandwidth.
Candidate ring_protocol_time(CollectiveKind kind, double bytes, int n, double bus_Bps,
                             double latency_us, NcclProto p, double ll_max_Bps) {
  const double share = p == NcclProto::LL      ? kRingLLShare
                       : p == NcclProto::LL128 ? kRingLL128Share
                                               : 1.0;
  const double busbw_Bps = ll_capped(bus_Bps * share, p, ll_max_Bps);
  Candidate t;
  t.algo = NcclAlgo::Ring;
  t.proto = p;
  t.latency_us = latency_us;
  t.bandwidth_s = bytes * nccl_bus_factor(kind, n) / busbw_Bps;
  return t;
}

// Ring: every step pays one hop; NCCL's step counts (2(n-1) for all-reduce,
// n-1 for reduce-scatter and all-gather) of which 2(nodes-1) resp. nodes-1
// cross the network; intra-node steps of a ring that leaves the node pay at
// least the network post overhead.
Candidate ring_time(CollectiveKind kind, double bytes, const GroupLinks& g, const Rates& r,
                    NcclProto p) {
  const int n = g.ranks;
  const int nodes = g.nodes();
  const bool all_reduce = kind == CollectiveKind::AllReduce;
  const int steps = all_reduce ? 2 * (n - 1) : n - 1;
  const int inter_steps = nodes <= 1 ? 0 : (all_reduce ? 2 * (nodes - 1) : nodes - 1);
  double intra_hop = kRingNvlinkHopUs.of(p) + wire_us(g.intra_wire_ns);
  if (nodes > 1) {
    const double post = kNetOverheadUs * (p == NcclProto::Simple ? 3.0 : 1.0);
    intra_hop = std::max(intra_hop, post);
  }
  // One rank per node exposes the network latency fully: NCCL charges the
  // tree's network hop there.
  const double net_hop = (g.ranks_per_node == 1 ? kTreeNetHopUs : kRingNetHopUs).of(p);
  const double inter_hop = net_hop + wire_us(g.inter_wire_ns);
  const double latency_us =
      kRingBaseUs.of(p) + (steps - inter_steps) * intra_hop + inter_steps * inter_hop;
  return ring_protocol_time(kind, bytes, n, r.ring_Bps, latency_us, p, r.ll_max_Bps);
}

// Double binary tree (all-reduce): a chain inside each node, a tree of
// log2(nodes) levels across nodes, paid on the way up and down.
Candidate tree_time(double bytes, const GroupLinks& g, const Rates& r, NcclProto p) {
  const int nodes = g.nodes();
  const double intra_hop = kTreeNvlinkHopUs.of(p) + wire_us(g.intra_wire_ns);
  const double inter_hop = kTreeNetHopUs.of(p) + wire_us(g.inter_wire_ns);
  const double latency_us = kTreeBaseUs.of(p) + 2.0 * ((g.ranks_per_node - 1) * intra_hop +
                                                       log2_floor(nodes) * inter_hop);
  double share = kTreeShare;
  if (p == NcclProto::LL) share *= kTreeLLShare;
  if (p == NcclProto::LL128) share *= nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0;
  const double busbw_Bps =
      ll_capped(r.ring_Bps * share, p, r.ll_max_Bps) * medium_size_share(p, bytes, 23);
  Candidate t;
  t.algo = NcclAlgo::Tree;
  t.proto = p;
  t.latency_us = latency_us;
  t.bandwidth_s = bytes * nccl_bus_factor(CollectiveKind::AllReduce, g.ranks) / busbw_Bps;
  return t;
}

// NVLS (all-reduce, NVLink SHARP): the switch reduces, so the algorithm
// bandwidth is a share of one GPU's NVLink rate. Across nodes (NVLS-tree)
// each GPU exchanges its 1/k slice of the node's sum over its own NIC: the
// node's NICs carry the buffer once with two nodes, twice (up and down a
// tree) with more.
Candidate nvls_time(const NcclFabric& f, double bytes, const GroupLinks& g, const Rates& r) {
  const int nodes = g.nodes();
  double algbw_Bps = g.intra_Bps * f.nvls_algbw_share;
  double latency_us = kNvlsIntraUs + wire_us(g.intra_wire_ns);
  if (nodes > 1) {
    algbw_Bps = std::min(algbw_Bps, r.net_node_Bps / (nodes <= 2 ? 1.0 : 2.0));
    latency_us += 2.0 * log2_floor(nodes) * (kNvlsTreeNetHopUs + wire_us(g.inter_wire_ns));
  }
  Candidate t;
  t.algo = NcclAlgo::Nvls;
  t.proto = NcclProto::Simple;
  t.latency_us = latency_us;
  t.bandwidth_s = bytes / (algbw_Bps * medium_size_share(NcclProto::Simple, bytes, 24));
  return t;
}

// All-to-all and send/recv are point-to-point: one launch, one hop; an
// all-to-all's traffic to other nodes, (n - ranks_per_node)/(n-1) of it,
// leaves through each GPU's own NIC (NCCL cannot aggregate NICs for it).
Candidate p2p_time(const NcclFabric& f, CollectiveKind kind, double bytes, const GroupLinks& g,
                   const Rates& r, NcclProto p) {
  const int n = g.ranks;
  const bool multi = g.ranks > g.ranks_per_node;
  const double nic_Bps = g.inter_Bps * f.nic_efficiency;
  double bus_Bps = multi ? nic_Bps : r.nvlink_Bps;
  if (kind == CollectiveKind::AllToAll && multi) {
    const double remote_share = static_cast<double>(n - g.ranks_per_node) / (n - 1);
    bus_Bps = std::min(r.nvlink_Bps, nic_Bps / remote_share);
  }
  const double hop = multi ? kRingNetHopUs.of(p) + wire_us(g.inter_wire_ns)
                           : kRingNvlinkHopUs.of(p) + wire_us(g.intra_wire_ns);
  return ring_protocol_time(kind, bytes, n, bus_Bps, kRingBaseUs.of(p) + hop, p, 0.0);
}

void keep_faster(Candidate& best, const Candidate& candidate, bool& have) {
  if (!have || candidate.seconds() < best.seconds()) {
    best = candidate;
    have = true;
  }
}

NcclTime to_time(const Candidate& c) {
  NcclTime t;
  t.algo = c.algo;
  t.proto = c.proto;
  t.latency_ns = us_to_ns(c.latency_us);
  t.bandwidth_ns = seconds_to_ns(c.bandwidth_s);
  t.time_ns = t.latency_ns + t.bandwidth_ns;
  return t;
}

}  // namespace

const char* to_string(NcclAlgo algo) {
  switch (algo) {
    case NcclAlgo::Auto:
      return "auto";
    case NcclAlgo::Ring:
      return "ring";
    case NcclAlgo::Tree:
      return "tree";
    case NcclAlgo::Nvls:
      return "nvls";
  }
  return "auto";
}

const char* to_string(NcclProto proto) {
  switch (proto) {
    case NcclProto::LL:
      return "LL";
    case NcclProto::LL128:
      return "LL128";
    case NcclProto::Simple:
      return "Simple";
  }
  return "Simple";
}

const char* nccl_algo_env(NcclAlgo algo) {
  switch (algo) {
    case NcclAlgo::Auto:
      return "";
    case NcclAlgo::Ring:
      return "Ring";
    case NcclAlgo::Tree:
      return "allreduce:tree";
    case NcclAlgo::Nvls:
      return "allreduce:nvls,nvlstree";
  }
  return "";
}

bool parse_nccl_algo(const std::string& text, NcclAlgo& out) {
  for (const NcclAlgo a : {NcclAlgo::Auto, NcclAlgo::Ring, NcclAlgo::Tree, NcclAlgo::Nvls}) {
    if (text == to_string(a)) {
      out = a;
      return true;
    }
  }
  return false;
}

double nccl_bus_factor(CollectiveKind kind, int ranks) {
  const double n = ranks;
  switch (kind) {
    case CollectiveKind::AllReduce:
      return 2.0 * (n - 1.0) / n;
    case CollectiveKind::ReduceScatter:
    case CollectiveKind::AllGather:
    case CollectiveKind::AllToAll:
      return (n - 1.0) / n;
    case CollectiveKind::SendRecv:
      return 1.0;
  }
  return 1.0;
}

std::string nccl_algo_unavailable(const NcclFabric& fabric, CollectiveKind kind,
                                  const GroupLinks& links, NcclAlgo algo) {
  if (algo == NcclAlgo::Auto) return "";
  const bool p2p = kind == CollectiveKind::AllToAll || kind == CollectiveKind::SendRecv;
  if (p2p) return "point-to-point operations run as sends and receives, with no ring, tree or NVLS";
  if (algo == NcclAlgo::Ring) return "";
  if (kind != CollectiveKind::AllReduce) {
    return std::string(to_string(algo)) + " runs all_reduce only in this model";
  }
  if (algo == NcclAlgo::Nvls && !fabric.nvlink_sharp) {
    return "nvls needs NVLink SHARP (NVSwitch 3: H100, H200), which this device has not";
  }
  if (algo == NcclAlgo::Nvls && !(links.ranks_per_node >= 2 && links.intra_Bps > 0)) {
    return "nvls needs at least 2 ranks a node joined by NVLink";
  }
  return "";
}

NcclTime nccl_collective(const NcclFabric& fabric, CollectiveKind kind, double bytes,
                         const GroupLinks& links, NcclAlgo algo) {
  if (links.ranks <= 1 || !(bytes > 0.0)) return {};  // NaN included
  if (algo == NcclAlgo::Auto) algo = fabric.algo;
  const Rates r = rates_of(fabric, links);
  Candidate best;
  bool have = false;
  if (kind == CollectiveKind::AllToAll || kind == CollectiveKind::SendRecv) {
    for (const NcclProto p : kProtos)
      keep_faster(best, (p2p_time(fabric, kind, bytes, links, r, p)), have);
    return to_time(best);
  }
  const bool can_tree = nccl_algo_unavailable(fabric, kind, links, NcclAlgo::Tree).empty();
  const bool can_nvls = nccl_algo_unavailable(fabric, kind, links, NcclAlgo::Nvls).empty();
  const bool only = algo != NcclAlgo::Auto;
  if (can_nvls && (!only || algo == NcclAlgo::Nvls)) {
    keep_faster(best, (nvls_time(fabric, bytes, links, r)), have);
  }
  if (can_tree && (!only || algo == NcclAlgo::Tree)) {
    for (const NcclProto p : kProtos) keep_faster(best, (tree_time(bytes, links, r, p)), have);
  }
  if (!have || !only || algo == NcclAlgo::Ring) {
    for (const NcclProto p : kProtos) {
      keep_faster(best, (ring_time(kind, bytes, links, r, p)), have);
    }
  }
  return to_time(best);
}

}  // namespace parashift::core
