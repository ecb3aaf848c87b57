// Timing snapshot and restore traffic on the real links (FlowNetwork).
//
// Replication (once per plan): every rank sends its state to each peer host
// at the same time; links keep only the bandwidth training leaves, i.e. each
// link's capacity is scaled by (1 - training share), the training share being
// the busiest data-parallel group's collective time over the iteration
// (snapshot flows are lower priority: they use what training leaves).
//
// Restore (per failure; training is stopped, links at full capacity): lost
// ranks' shards flow from a surviving holder host to the spare GPU, source
// NIC on the same rail. A fat-tree is symmetric, so each restore is timed on
// a representative host pair of the same locality class (same rack / other
// rack) and cached by (class, rail, bytes) lists. Same-host restores are
// host-to-device copies at the PCIe rate.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/faults/fault_config.hpp"
#include "sim/faults/cluster_slots.hpp"
#include "sim/kernel.hpp"
#include "sim/network/flow_network.hpp"

namespace parashift::sim {

struct RestoreFlow {
  int from_host = 0;
  int to_gpu = 0;
  double bytes = 0;
};

class RestoreTimer {
 public:
  RestoreTimer(const topo::Topology& topology, const ClusterSlots& slots, double host_copy_Bps);
  /// Time until the last of `flows` (run together) has arrived.
  TimeNs transfer_ns(const std::vector<RestoreFlow>& flows);
  std::size_t simulated() const { return cache_.size(); }

 private:
  const ClusterSlots* slots_;
  double host_copy_Bps_;
  Kernel kernel_;
  std::unique_ptr<FlowNetwork> network_;
  int src_host_ = 0, same_rack_host_ = 0, other_rack_host_ = 0;
  std::map<std::string, TimeNs> cache_;
};

/// Replication time of one snapshot of every rank (identity rank -> GPU)
/// to `replicas - 1` peer hosts in `domain`, with links scaled by
/// (1 - training_share).
TimeNs replication_ns(const topo::Topology& topology, const ClusterSlots& slots, double rank_bytes,
                      int replicas, core::FailureDomain domain, double training_share);

}  // namespace parashift::sim
