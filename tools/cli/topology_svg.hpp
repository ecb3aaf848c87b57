// The topology drawn without Graphviz (`topo --svg`): each host (its GPUs,
// NVSwitches and NICs) one box on the bottom row, each switch tier a row
// above it (leaf, spine, core, router), one line per pair of connected
// boxes with the cables and their bandwidth in its tooltip. Host-internal
// links are summarised in the host's tooltip. Deterministic.
#pragma once

#include <ostream>

#include "topologies/topology.hpp"

namespace parashift::tools {

struct TopologyDrawing {
  int hosts = 0;
  int switches = 0;
  int connections = 0;  // lines drawn: connected pairs of boxes
};

/// Writes the whole SVG document; returns what it drew.
TopologyDrawing write_topology_svg(std::ostream& out, const topo::Topology& topology,
                                   const std::string& title);

}  // namespace parashift::tools
