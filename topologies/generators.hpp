// The catalogue of topology generators: name, summary, parameters, builder.
// generate_topology() (declared in topology.hpp) looks names up here.
#pragma once

#include <string>
#include <vector>

#include "topologies/params.hpp"
#include "topologies/topology.hpp"

namespace parashift::topo {

struct GeneratorInfo {
  std::string name;
  std::string summary;
  std::vector<ParamDoc> params;
  Topology (*build)(const ParamReader& params) = nullptr;
};

/// Every generator, sorted by name; built on each call (no global registry).
std::vector<GeneratorInfo> generator_catalog();

// One entry per generator file.
GeneratorInfo dgx_a100_generator();
GeneratorInfo dgx_h100_generator();
GeneratorInfo rail_fat_tree_generator();
GeneratorInfo fat_tree_generator();
GeneratorInfo torus_generator();

}  // namespace parashift::topo
