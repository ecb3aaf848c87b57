// `cluster.groups`: a cluster of more than one device type, each group a
// device preset and a count of nodes, taking the topology's hosts in order
// (core/cost/device_groups.hpp says how the cost model prices them).
#pragma once

#include <string>
#include <vector>

#include "core/cost/device_groups.hpp"
#include "topologies/topology.hpp"

namespace parashift::core {

class YamlFields;

struct GroupSpec {
  DeviceSpec device;
  int nodes = 0;
};

/// Reads the list under `groups` of `cluster` ({device, nodes} each; a
/// known device preset, nodes > 0). Throws InputError naming the element.
std::vector<GroupSpec> read_cluster_groups(YamlFields& cluster);

/// Places the groups on the topology's hosts in order; throws InputError
/// at `where` unless their nodes add up to the host count.
std::vector<DeviceGroup> place_groups(const std::vector<GroupSpec>& groups,
                                      const topo::Topology& topology, const std::string& where);

}  // namespace parashift::core
