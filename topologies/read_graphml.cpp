// GraphML -> RawGraph, through boost::read_graphml.
//
// boost::read_graphml does not report node ids, nor edges to undeclared
// nodes (it creates them), so a first pass over the XML collects the ids in
// the order boost adds vertices and checks every edge endpoint.
#include <set>
#include <sstream>

#include <boost/graph/graphml.hpp>
#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>

#include "topologies/raw_graph.hpp"
#include "topologies/topology.hpp"

namespace parashift::topo {
namespace {

using boost::property_tree::ptree;

// Receives what boost::read_graphml finds, all values as strings.
class Collector : public boost::mutate_graph {
 public:
  Collector(RawGraph& raw, bool directed) : raw_(raw), directed_(directed) {}

  bool is_directed() const override { return directed_; }

  boost::any do_add_vertex() override {
    raw_.nodes.emplace_back();
    return static_cast<int>(raw_.nodes.size()) - 1;
  }

  std::pair<boost::any, bool> do_add_edge(boost::any source, boost::any target) override {
    raw_.edges.push_back(RawEdge{boost::any_cast<int>(source), boost::any_cast<int>(target), {}});
    return {static_cast<int>(raw_.edges.size()) - 1, true};
  }

  void set_graph_property(const std::string&, const std::string&, const std::string&) override {}

  void set_vertex_property(const std::string& name, boost::any vertex, const std::string& value,
                           const std::string&) override {
    if (!value.empty()) raw_.nodes[boost::any_cast<int>(vertex)].attrs[name] = value;
  }

  void set_edge_property(const std::string& name, boost::any edge, const std::string& value,
                         const std::string&) override {
    if (!value.empty()) raw_.edges[boost::any_cast<int>(edge)].attrs[name] = value;
  }

 private:
  RawGraph& raw_;
  bool directed_;
};

std::string xml_attribute(const ptree& element, const char* name) {
  const auto attrs = element.get_child_optional("<xmlattr>");
  return attrs ? attrs->get<std::string>(name, "") : "";
}

// The graphs boost reads: the first top-level <graph> and, recursively, the
// <graph> children of each graph read (boost's get_graphs).
void collect_graphs(const ptree& parent, bool first_only, std::vector<const ptree*>& out) {
  for (const auto& [tag, child] : parent) {
    if (tag != "graph") continue;
    out.push_back(&child);
    collect_graphs(child, false, out);
    if (first_only) break;
  }
}

struct Outline {
  std::vector<std::string> node_ids;  // in the order boost adds vertices
  bool directed = false;
};

Outline outline(const std::string& text, const std::string& file) {
  ptree top;
  std::istringstream in(text);
  try {
    boost::property_tree::read_xml(in, top,
                                   boost::property_tree::xml_parser::no_comments |
                                       boost::property_tree::xml_parser::trim_whitespace);
  } catch (const boost::property_tree::xml_parser_error& e) {
    throw TopologyError(file + ":" + std::to_string(e.line()) +
                        ": XML syntax error: " + e.message());
  }
  const auto root = top.get_child_optional("graphml");
  if (!root) throw TopologyError(file + ": no <graphml> root element; expected a GraphML file");
  std::vector<const ptree*> graphs;
  collect_graphs(*root, true, graphs);
  if (graphs.empty()) throw TopologyError(file + ": no <graph> element inside <graphml>");

  Outline result;
  const std::string edge_default = xml_attribute(*graphs.front(), "edgedefault");
  if (edge_default != "directed" && edge_default != "undirected") {
    throw TopologyError(file + ": <graph edgedefault=\"" + edge_default +
                        "\">: expected edgedefault=\"undirected\" or \"directed\"");
  }
  result.directed = edge_default == "directed";
  std::set<std::string> declared;
  for (const ptree* g : graphs) {
    for (const auto& [tag, child] : *g) {
      if (tag != "node") continue;
      const std::string id = xml_attribute(child, "id");
      if (id.empty())
        throw TopologyError(file + ": a <node> has no id; expected <node id=\"...\">");
      if (!declared.insert(id).second) {
        throw TopologyError(file + ": node '" + id + "' is declared twice; expected unique ids");
      }
      result.node_ids.push_back(id);
    }
  }
  for (const ptree* g : graphs) {
    if (xml_attribute(*g, "edgedefault").empty()) {
      throw TopologyError(file + ": a nested <graph> has no edgedefault; expected " +
                          "edgedefault=\"undirected\" or \"directed\"");
    }
    for (const auto& [tag, child] : *g) {
      if (tag != "edge") continue;
      const std::string source = xml_attribute(child, "source");
      const std::string target = xml_attribute(child, "target");
      const std::string where = "edge '" + source + "' -> '" + target + "'";
      for (const std::string& end : {source, target}) {
        if (end.empty()) {
          throw TopologyError(file + ": " + where + ": expected both source and target");
        }
        if (declared.count(end) == 0) {
          throw TopologyError(file + ": " + where + ": node '" + end +
                              "' is not declared; expected a <node id=\"" + end + "\">");
        }
      }
    }
  }
  return result;
}

}  // namespace

RawGraph read_graphml_text(const std::string& text, const std::string& file) {
  const Outline shape = outline(text, file);
  RawGraph raw;
  raw.directed = shape.directed;
  try {
    Collector collector(raw, shape.directed);
    std::istringstream in(text);
    boost::read_graphml(in, collector, 0);
  } catch (const boost::directed_graph_error&) {
    throw TopologyError(file + ": mixes directed and undirected edges; expected one kind");
  } catch (const boost::undirected_graph_error&) {
    throw TopologyError(file + ": mixes directed and undirected edges; expected one kind");
  } catch (const boost::graph_exception& e) {
    throw TopologyError(file + ": cannot read GraphML: " + e.what());
  } catch (const boost::property_tree::ptree_error& e) {
    throw TopologyError(file + ": cannot read GraphML: " + e.what());
  }
  if (raw.nodes.size() != shape.node_ids.size()) {
    throw TopologyError(file + ": GraphML reader found " + std::to_string(raw.nodes.size()) +
                        " nodes but " + std::to_string(shape.node_ids.size()) + " are declared");
  }
  for (std::size_t i = 0; i < raw.nodes.size(); ++i) raw.nodes[i].name = shape.node_ids[i];
  return raw;
}

}  // namespace parashift::topo
