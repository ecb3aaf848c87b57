// The scenario's slowdown events over simulated time (faults.events): a GPU
// slower by a factor, a link degraded to a fraction of its bandwidth,
// background traffic taking a share of some links, a tenant's flows on some
// links (their share set by the traffic classes), and seeded random jitter
// on compute times. Failures (`fail` events) belong to fault campaigns.
#pragma once

#include <cstdint>
#include <vector>

#include "core/faults/fault_config.hpp"
#include "core/units.hpp"
#include "topologies/topology.hpp"

namespace parashift::sim {

using core::TimeNs;

/// What the cluster looks like during one iteration.
struct ClusterState {
  std::vector<double> gpu_slowdown;              // per GPU; empty when all are nominal
  std::vector<std::pair<int, double>> link_Bps;  // links whose bandwidth differs from nominal
  std::vector<int> tenant_links;                 // links a tenant loads (ascending)
  friend bool operator==(const ClusterState&, const ClusterState&) = default;
};

class Slowdowns {
 public:
  /// Resolves link names against `topology`; an unknown link or GPU throws
  /// core::InputError naming the event.
  Slowdowns(const std::vector<core::FaultEvent>& events, const topo::Topology& topology,
            std::uint64_t seed);

  /// The state for an iteration that starts at `now_ns` (iteration `index`,
  /// which seeds the jitter draw).
  ClusterState at(TimeNs now_ns, std::int64_t index) const;
  bool has_jitter() const { return sigma_ > 0; }
  bool empty() const {
    return gpu_events_.empty() && link_events_.empty() && tenant_events_.empty() && sigma_ == 0;
  }

 private:
  struct GpuEvent {
    int gpu;
    double factor;
    TimeNs from_ns, until_ns;
  };
  struct LinkEvent {
    std::vector<int> links;
    double keep;  // share of bandwidth left
    TimeNs from_ns, until_ns;
  };
  const topo::Topology* topology_;
  std::vector<GpuEvent> gpu_events_;
  std::vector<LinkEvent> link_events_;
  std::vector<LinkEvent> tenant_events_;  // keep unused
  double sigma_ = 0;
  std::uint64_t seed_;
};

}  // namespace parashift::sim
