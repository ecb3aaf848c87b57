// Spare hosts added to a topology: each a copy of an existing host (its GPUs,
// NVSwitches and NICs, the links among them, and its links to the fabric's
// switches), so a rank moved onto a spare is timed on real links. Used by the
// simulator for `faults.spares`, the hot spares a job keeps outside its plan.
#pragma once

#include <vector>

#include "topologies/topology.hpp"

namespace parashift::topo {

/// A copy of `topology` with one host appended per entry of
/// `template_hosts`, cabled like that host (host ids and GPU indices follow
/// the existing ones; names get the prefix "spareN/"). Existing vertices and
/// link ids are unchanged. Throws TopologyError for a host out of range.
Topology with_spare_hosts(const Topology& topology, const std::vector<int>& template_hosts);

}  // namespace parashift::topo
