// The foundation network model: a transfer between two GPUs follows its
// route in the topology graph and gets the bottleneck bandwidth of that
// route, plus the sum of link latencies. It sees no contention between
// transfers; the flow-level max-min model replaces it where links are shared.
//   t = bytes / min(link bandwidth on the path) + sum(link latency)
#pragma once

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/units.hpp"
#include "topologies/topology.hpp"

namespace parashift::sim {

using core::TimeNs;

struct PathInfo {
  double bottleneck_Bps = 0;
  TimeNs latency_ns = 0;
  int hops = 0;
};

class PathModel {
 public:
  explicit PathModel(const topo::Topology& topology) : topology_(&topology) {}

  /// Links whose bandwidth differs from the topology's (degraded, or shared
  /// with background traffic); clears the route cache.
  void set_link_overrides(const std::vector<std::pair<int, double>>& link_Bps);
  const std::vector<std::pair<int, double>>& link_overrides() const { return overrides_; }
  /// A link's rate now: its override, or the topology's.
  double link_Bps(int link) const;
  /// The topology's routes changed (a link went down): forgets cached paths.
  void routes_changed() { cache_.clear(); }

  /// Route properties from GPU `a` to GPU `b` (cached per pair).
  const PathInfo& path(int gpu_a, int gpu_b) const;
  TimeNs transfer_ns(int gpu_a, int gpu_b, double bytes) const;
  const topo::Topology& topology() const { return *topology_; }

 private:
  const topo::Topology* topology_;
  std::vector<std::pair<int, double>> overrides_;
  std::unordered_map<int, double> override_by_link_;
  mutable std::unordered_map<std::uint64_t, PathInfo> cache_;
};

}  // namespace parashift::sim
