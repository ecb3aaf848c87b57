// What a topology file holds before it is checked: named nodes and edges
// with string attributes. The DOT and GraphML readers produce it; one
// converter (load_topology.cpp) turns it into a Topology with clear errors.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace parashift::topo {

struct RawNode {
  std::string name;
  std::map<std::string, std::string> attrs;  // non-empty values only
};

struct RawEdge {
  int src = -1;  // index into RawGraph::nodes
  int dst = -1;
  std::map<std::string, std::string> attrs;
};

struct RawGraph {
  bool directed = false;  // an undirected edge is a cable (two links)
  std::vector<RawNode> nodes;
  std::vector<RawEdge> edges;
};

/// Parse the text of a Graphviz / GraphML file; `file` names it in errors.
RawGraph read_dot_text(const std::string& text, const std::string& file);
RawGraph read_graphml_text(const std::string& text, const std::string& file);

/// true when a sorts before b with digit runs compared as numbers ("g2" < "g10").
bool natural_less(const std::string& a, const std::string& b);

}  // namespace parashift::topo
