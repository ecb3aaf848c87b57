// NCCL's collectives as it runs them, in closed form: the one model of a
// collective that plan, validate, estimate, simulate and `parashift
// collectives` use (docs/collectives.md has the equations and the source of
// every parameter).
//
// For each algorithm NCCL can run (ring, tree, NVLS) and each protocol (LL,
// LL128, Simple) the time is
//   t = latency(algo, proto) + bytes * bus_factor / busbw(algo, proto)
// and, unless an algorithm is forced, the pair with the smallest t is the one
// NCCL's tuner picks. Latencies are NCCL's per-call base latency plus the
// per-hop latency of every step a ring (or tree level) pays; bandwidths are
// the links' rates times the fabric's protocol efficiency, with a group that
// has k GPUs in each node driving min(k, NICs per node) NICs (channels spread
// over the rails; PXN keeps each rail used once).
#pragma once

#include <string>

#include "core/cost/work_profile.hpp"
#include "core/units.hpp"

namespace parashift::core {

enum class NcclAlgo { Auto, Ring, Tree, Nvls };
enum class NcclProto { LL, LL128, Simple };
const char* to_string(NcclAlgo algo);
const char* to_string(NcclProto proto);
/// "auto", "ring", "tree", "nvls"; false (and `out` untouched) for anything else.
bool parse_nccl_algo(const std::string& text, NcclAlgo& out);
/// NCCL_ALGO's value pinning `algo` as the model does (NCCL >= 2.24's
/// per-collective syntax): "Ring" for every collective; "allreduce:tree"
/// and "allreduce:nvls,nvlstree" for the all-reduce alone, since tree and
/// NVLS run nothing else and NCCL no longer falls back to ring for a
/// collective its NCCL_ALGO leaves no algorithm; "" for Auto.
const char* nccl_algo_env(NcclAlgo algo);

/// The per-fabric parameters: few, physical, each with its published source
/// (docs/collectives.md). Never fitted per measurement.
struct NcclFabric {
  /// Share of the NVLink rate a ring's Simple protocol sustains: 370 of
  /// 450 GB/s on H100 (NCCL maintainer, NVIDIA/nccl-tests#212).
  double nvlink_efficiency = 0.82;
  /// Share of a NIC's rate NCCL sustains: 46-48 GB/s of 50 GB/s on NDR
  /// (NVIDIA/nccl-tests#290), 24 of 25 GB/s on HDR (NVIDIA/nccl-tests#119).
  double nic_efficiency = 0.94;
  /// NVLink SHARP (NVSwitch 3, Hopper and later): NCCL's NVLS algorithm.
  bool nvlink_sharp = false;
  /// NVLS all-reduce algorithm bandwidth as a share of the NVLink rate:
  /// ~275 of 450 GB/s on 8 H100 (NVIDIA/nccl-tests#212).
  double nvls_algbw_share = 0.61;
  /// The most bus bandwidth NCCL's LL protocol reaches inside one node, by
  /// GPU generation (NCCL src/graph/tuning.cc, llMaxBws: Volta 39, Ampere
  /// 87.7, Hopper 141, Blackwell 282 GB/s); 0: no cap. Across nodes the cap
  /// is the host CPU's (39 GB/s on 2 nodes, 20.4 beyond, NCCL's Intel
  /// figures; the CPU is not modelled).
  double ll_max_node_Bps = 0;
  /// NICs (rails) of one node; one per GPU on DGX/HGX systems.
  int nics_per_node = 8;
  /// The algorithm every collective runs where it can, as NCCL_ALGO pins
  /// it (`cluster.nccl_algo`); Auto: NCCL's tuner picks by size.
  NcclAlgo algo = NcclAlgo::Auto;
};

/// What one group of ranks sees of the cluster (raw link rates: the
/// efficiencies above are applied here, once).
struct GroupLinks {
  int ranks = 1;
  int ranks_per_node = 1;  // ranks of the group sharing a node (the most on any)
  /// The fewest ranks of the group on any node it uses (0: as
  /// ranks_per_node, a group spread evenly): every ring enters and leaves
  /// that node through its ranks' NICs alone (a tensor-parallel group
  /// split 7 + 1 by a rank moved onto a spare crosses one NIC).
  int fewest_per_node = 0;
  double intra_Bps = 0;      // per GPU, one direction (NVLink)
  double inter_Bps = 0;      // per NIC, one direction
  TimeNs intra_wire_ns = 0;  // wire latency of one hop inside a node
  TimeNs inter_wire_ns = 0;  // wire latency of one hop between nodes
  int nodes() const { return (ranks + ranks_per_node - 1) / ranks_per_node; }
  int nic_ranks() const { return fewest_per_node > 0 ? fewest_per_node : ranks_per_node; }
};

struct NcclTime {
  TimeNs time_ns = 0;       // latency_ns + bandwidth_ns
  TimeNs latency_ns = 0;    // launch and per-step latency
  TimeNs bandwidth_ns = 0;  // bytes * bus_factor / busbw
  NcclAlgo algo = NcclAlgo::Ring;
  NcclProto proto = NcclProto::Simple;
};

/// nccl-tests' bus-bandwidth factor of `kind` over n ranks: all-reduce
/// 2(n-1)/n; reduce-scatter, all-gather, all-to-all (n-1)/n; send/recv 1.
double nccl_bus_factor(CollectiveKind kind, int ranks);

/// Why `algo` cannot run `kind` on this group ("" when it can; Auto always
/// can, Ring every collective): send/recv and all-to-all are point-to-point,
/// with no algorithm to choose; tree and NVLS are all-reduce only; NVLS needs
/// NVLink SHARP and at least 2 ranks a node.
std::string nccl_algo_unavailable(const NcclFabric& fabric, CollectiveKind kind,
                                  const GroupLinks& links, NcclAlgo algo);

/// One collective of `bytes` per rank (nccl-tests' size). With `algo` Auto
/// the fastest algorithm/protocol pair; otherwise the fastest protocol of
/// `algo`, or of the ring where `algo` cannot run this collective (tree and
/// NVLS are all-reduce only; NVLS needs NVLink SHARP). Allocation-free.
NcclTime nccl_collective(const NcclFabric& fabric, CollectiveKind kind, double bytes,
                         const GroupLinks& links, NcclAlgo algo = NcclAlgo::Auto);

}  // namespace parashift::core
