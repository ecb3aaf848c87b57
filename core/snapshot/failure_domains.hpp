// Failure domains: a host (node) fails as a whole, its memory with it; a rack
// is a group of hosts that share a leaf switch (hosts whose first GPU's NIC
// connects to the same leaf), or `hosts_per_rack` consecutive hosts when the
// scenario sets it. Snapshot replicas go to peer hosts in other domains.
#pragma once

#include <optional>
#include <set>
#include <vector>

#include "core/faults/fault_config.hpp"
#include "topologies/topology.hpp"

namespace parashift::core {

struct FailureDomains {
  std::vector<int> rack_of_host;  // by host id
  std::vector<std::vector<int>> hosts_of_rack;
  std::vector<int> position_in_rack;  // by host id

  int hosts() const { return static_cast<int>(rack_of_host.size()); }
  int racks() const { return static_cast<int>(hosts_of_rack.size()); }
  /// Appends a host (e.g. a spare host) to `rack`; returns its id.
  int add_host(int rack);
};

/// Racks of the topology's hosts (see the file comment).
FailureDomains failure_domains(const topo::Topology& topology,
                               std::optional<int> hosts_per_rack = std::nullopt);

/// The `copies` hosts that keep replicas of `host`'s snapshot, nearest first:
///   Node: the next hosts of the same rack (wrapping), never `host` itself;
///         other racks once the rack is exhausted.
///   Rack: the host at the same position (modulo size) in the next racks.
/// Deterministic; spare hosts (added with add_host) take part like any other.
/// Hosts in `skip` (down, being repaired) are passed over: the replica goes
/// to the next candidate instead.
std::vector<int> peer_hosts(const FailureDomains& domains, int host, int copies,
                            FailureDomain domain, const std::set<int>* skip = nullptr);

}  // namespace parashift::core
