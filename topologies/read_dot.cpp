// Graphviz DOT -> RawGraph, through boost::read_graphviz.
#include <cctype>
#include <type_traits>
#include <vector>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/graphviz.hpp>

#include "topologies/raw_graph.hpp"
#include "topologies/topology.hpp"

namespace parashift::topo {
namespace {

struct DotVertex {
  std::string name;
  std::string kind;
  std::string host;
  std::string gpu;
};

struct DotEdge {
  std::string bandwidth_gbps;
  std::string bandwidth_Bps;
  std::string latency_ns;
};

void keep(std::map<std::string, std::string>& attrs, const char* name, const std::string& value) {
  if (!value.empty()) attrs[name] = value;
}

// Whether the first statement is `digraph` (after comments and `strict`).
// boost::read_graphviz wants a graph type of the file's directedness.
bool starts_directed(const std::string& text) {
  std::size_t i = 0;
  std::string word;
  while (i < text.size()) {
    const char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c)) != 0) {
      ++i;
    } else if (text.compare(i, 2, "//") == 0 || c == '#') {
      i = text.find('\n', i);
    } else if (text.compare(i, 2, "/*") == 0) {
      i = text.find("*/", i + 2);
      if (i != std::string::npos) i += 2;
    } else {
      word.clear();
      while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i])) != 0) {
        word += static_cast<char>(std::tolower(static_cast<unsigned char>(text[i++])));
      }
      if (word != "strict") return word == "digraph";
    }
    if (i == std::string::npos) break;
  }
  return false;
}

template <typename Directedness>
RawGraph read_as(const std::string& text) {
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, Directedness, DotVertex, DotEdge>;
  Graph g;
  boost::dynamic_properties dp(boost::ignore_other_properties);
  dp.property("node_id", boost::get(&DotVertex::name, g));
  dp.property("kind", boost::get(&DotVertex::kind, g));
  dp.property("host", boost::get(&DotVertex::host, g));
  dp.property("gpu", boost::get(&DotVertex::gpu, g));
  dp.property("bandwidth_gbps", boost::get(&DotEdge::bandwidth_gbps, g));
  dp.property("bandwidth_Bps", boost::get(&DotEdge::bandwidth_Bps, g));
  dp.property("latency_ns", boost::get(&DotEdge::latency_ns, g));
  boost::read_graphviz(text, g, dp, "node_id");

  RawGraph raw;
  raw.directed = std::is_same_v<Directedness, boost::directedS>;
  for (const auto v : boost::make_iterator_range(boost::vertices(g))) {
    RawNode node{g[v].name, {}};
    keep(node.attrs, "kind", g[v].kind);
    keep(node.attrs, "host", g[v].host);
    keep(node.attrs, "gpu", g[v].gpu);
    raw.nodes.push_back(std::move(node));
  }
  for (const auto e : boost::make_iterator_range(boost::edges(g))) {
    RawEdge edge{static_cast<int>(boost::source(e, g)), static_cast<int>(boost::target(e, g)), {}};
    keep(edge.attrs, "bandwidth_gbps", g[e].bandwidth_gbps);
    keep(edge.attrs, "bandwidth_Bps", g[e].bandwidth_Bps);
    keep(edge.attrs, "latency_ns", g[e].latency_ns);
    raw.edges.push_back(std::move(edge));
  }
  return raw;
}

RawGraph read_any(const std::string& text) {
  return starts_directed(text) ? read_as<boost::directedS>(text)
                               : read_as<boost::undirectedS>(text);
}

bool parses(const std::string& text) {
  try {
    read_any(text);
    return true;
  } catch (const boost::graph_exception&) {
    return false;
  }
}

// boost::read_graphviz reports no position. The line of a syntax error is
// found by bisection: the first k such that lines 1..k, closed by "}", no
// longer parse (one statement per line, as DOT files usually are). 0 when
// every prefix parses (the error is at the end: e.g. a missing "}").
std::size_t syntax_error_line(const std::string& text) {
  std::vector<std::size_t> ends;  // offset just past each line
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') ends.push_back(i + 1);
  }
  if (ends.empty() || ends.back() != text.size()) ends.push_back(text.size());
  auto prefix_fails = [&](std::size_t lines) {
    return !parses(text.substr(0, ends[lines - 1]) + "\n}\n");
  };
  std::size_t good = 0;  // lines 1..good parse when closed (0: not known to)
  std::size_t bad = ends.size();
  if (!prefix_fails(bad)) return 0;
  // Start past the header ("graph g {"): comments before it fail alone.
  const std::size_t brace = text.find('{');
  if (brace != std::string::npos) {
    std::size_t header = 1;
    while (ends[header - 1] <= brace) ++header;
    if (header < bad && !prefix_fails(header)) good = header;
  }
  while (good + 1 < bad) {
    const std::size_t mid = good + (bad - good) / 2;
    (prefix_fails(mid) ? bad : good) = mid;
  }
  return bad;
}

}  // namespace

RawGraph read_dot_text(const std::string& text, const std::string& file) {
  try {
    return read_any(text);
  } catch (const boost::bad_graphviz_syntax& e) {
    const std::size_t line = syntax_error_line(text);
    throw TopologyError(file + (line > 0 ? ":" + std::to_string(line) : std::string()) +
                        ": Graphviz syntax error: " + e.errmsg +
                        (line > 0 ? std::string() : " (at the end of the file)"));
  } catch (const boost::graph_exception& e) {
    throw TopologyError(file + ": cannot read Graphviz: " + e.what());
  }
}

}  // namespace parashift::topo
