#include "core/scenario/cluster_groups.hpp"

#include "core/input_error.hpp"
#include "core/scenario/yaml_fields.hpp"

namespace parashift::core {

std::vector<GroupSpec> read_cluster_groups(YamlFields& cluster) {
  const YAML::Node list = cluster.child("groups");
  if (!list.IsSequence() || list.size() == 0)
    cluster.fail("groups", "expected a list of {device, nodes} maps");
  std::vector<GroupSpec> out;
  std::size_t i = 0;
  for (const auto& element : list) {
    if (!element.IsMap())
      throw InputError(cluster.where_item("groups", element, i) +
                       ": expected a map {device: PRESET, nodes: N}");
    YamlFields g = cluster.item("groups", element, i);
    GroupSpec spec;
    const std::string device = g.string("device");
    try {
      spec.device = device_preset(device);
    } catch (const InputError& e) {
      g.fail("device", e.what());
    }
    spec.nodes = g.positive_int("nodes");
    g.reject_unknown();
    out.push_back(spec);
    ++i;
  }
  return out;
}

std::vector<DeviceGroup> place_groups(const std::vector<GroupSpec>& groups,
                                      const topo::Topology& topology, const std::string& where) {
  int nodes = 0;
  for (const GroupSpec& g : groups) nodes += g.nodes;
  if (nodes != topology.host_count())
    throw InputError(where + ": the groups hold " + std::to_string(nodes) +
                     " nodes; expected the topology's " + std::to_string(topology.host_count()));
  std::vector<DeviceGroup> out;
  int first = 0;
  for (const GroupSpec& g : groups) {
    out.push_back({g.device, first, g.nodes * topology.gpus_per_host()});
    first += g.nodes * topology.gpus_per_host();
  }
  return out;
}

}  // namespace parashift::core
