// generate_topology and generator_names over the generator catalogue.
#include "topologies/generators.hpp"

#include <algorithm>

namespace parashift::topo {

std::vector<GeneratorInfo> generator_catalog() {
  std::vector<GeneratorInfo> all{dgx_a100_generator(), dgx_h100_generator(), fat_tree_generator(),
                                 rail_fat_tree_generator(), torus_generator()};
  std::sort(all.begin(), all.end(),
            [](const GeneratorInfo& a, const GeneratorInfo& b) { return a.name < b.name; });
  return all;
}

std::vector<std::string> generator_names() {
  std::vector<std::string> names;
  for (const auto& g : generator_catalog()) names.push_back(g.name);
  return names;
}

Topology generate_topology(const std::string& generator,
                           const std::map<std::string, std::string>& params) {
  for (const auto& g : generator_catalog()) {
    if (g.name != generator) continue;
    const ParamReader reader(g.name, g.params, params);
    Topology topology = g.build(reader);
    topology.validate("generator '" + g.name + "'");
    return topology;
  }
  std::string names;
  for (const auto& name : generator_names()) names += (names.empty() ? "" : ", ") + name;
  throw TopologyError("unknown topology generator '" + generator + "'; expected one of: " + names);
}

}  // namespace parashift::topo
