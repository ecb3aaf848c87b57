// write_dot: a compact Graphviz file that load_topology reads back.
//
// Nodes are grouped by kind and links by (bandwidth, latency), each group a
// `subgraph` with `node[...]` / `edge[...]` defaults, so a line is just
// `g7[host=0]` or `g7--s0`. The top level sets no defaults, so a node named
// only by an edge loads without a kind and is reported.
#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <map>
#include <ostream>
#include <tuple>
#include <unordered_map>

#include "topologies/raw_graph.hpp"
#include "topologies/topology.hpp"

namespace parashift::topo {
namespace {

bool is_plain_id(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])) != 0) return false;
  for (const char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_') return false;
  }
  std::string lower;
  for (const char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower != "node" && lower != "edge" && lower != "graph" && lower != "digraph" &&
         lower != "subgraph" && lower != "strict";
}

std::string dot_id(const std::string& name) {
  if (is_plain_id(name)) return name;
  std::string quoted = "\"";
  for (const char c : name) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

// Shortest fixed-point text that reads back to the same double (a DOT
// numeral has no exponent).
std::string exact_number(double value) {
  std::array<char, 512> buffer{};
  const auto result =
      std::to_chars(buffer.data(), buffer.data() + buffer.size(), value, std::chars_format::fixed);
  return std::string(buffer.data(), result.ptr);
}

// Pairs every link with an identical reverse link; empty when some link has
// no partner (then the file must be a digraph). Returns the first link of
// each cable, in id order.
std::vector<LinkId> pair_cables(const Topology& t) {
  using Key = std::tuple<int, int, double, std::int64_t>;
  struct KeyHash {
    std::size_t operator()(const Key& k) const {
      return std::hash<long long>()(static_cast<long long>(std::get<0>(k)) * 1'000'003 +
                                    std::get<1>(k)) ^
             std::hash<double>()(std::get<2>(k)) ^ std::hash<std::int64_t>()(std::get<3>(k));
    }
  };
  std::unordered_map<Key, std::vector<LinkId>, KeyHash> unpaired;
  std::vector<LinkId> cables;
  std::size_t open = 0;
  for (LinkId e = 0; e < t.link_count(); ++e) {
    const LinkInfo& l = t.link(e);
    auto it = unpaired.find(Key{l.dst, l.src, l.bandwidth_Bps, l.latency_ns});
    if (it != unpaired.end() && !it->second.empty()) {
      cables.push_back(it->second.back());
      it->second.pop_back();
      --open;
    } else {
      unpaired[Key{l.src, l.dst, l.bandwidth_Bps, l.latency_ns}].push_back(e);
      ++open;
    }
  }
  if (open != 0) return {};
  std::sort(cables.begin(), cables.end());
  return cables;
}

}  // namespace

void write_dot(const Topology& t, std::ostream& out) {
  std::vector<LinkId> written = pair_cables(t);
  const bool undirected = !written.empty() || t.link_count() == 0;
  if (!undirected) {
    written.resize(static_cast<std::size_t>(t.link_count()));
    for (LinkId e = 0; e < t.link_count(); ++e) written[e] = e;
  }

  // GPU indices are written only when natural name order would not give them.
  std::vector<int> by_name(static_cast<std::size_t>(t.gpu_count()));
  for (int g = 0; g < t.gpu_count(); ++g) by_name[g] = g;
  std::stable_sort(by_name.begin(), by_name.end(), [&](int a, int b) {
    return natural_less(t.node(t.gpu_node(a)).name, t.node(t.gpu_node(b)).name);
  });
  bool write_gpu_index = false;
  for (int g = 0; g < t.gpu_count(); ++g) write_gpu_index = write_gpu_index || by_name[g] != g;

  out << "// parashift topology: " << t.node_count() << " nodes (" << t.gpu_count() << " GPUs on "
      << t.host_count() << " hosts), " << t.link_count() << " links\n";
  out << (undirected ? "graph" : "digraph") << " parashift {\n";
  for (const NodeKind kind : {NodeKind::Gpu, NodeKind::NvSwitch, NodeKind::Nic, NodeKind::Leaf,
                              NodeKind::Spine, NodeKind::Core, NodeKind::Router}) {
    bool opened = false;
    for (int v = 0; v < t.node_count(); ++v) {
      const NodeInfo& n = t.node(v);
      if (n.kind != kind) continue;
      if (!opened) {
        out << "subgraph{node[kind=" << to_string(kind) << "]\n";
        opened = true;
      }
      out << dot_id(n.name);
      const bool has_gpu = write_gpu_index && kind == NodeKind::Gpu;
      if (n.host >= 0 || has_gpu) {
        out << '[';
        if (n.host >= 0) out << "host=" << n.host << (has_gpu ? "," : "");
        if (has_gpu) out << "gpu=" << n.gpu_index;
        out << ']';
      }
      out << '\n';
    }
    if (opened) out << "}\n";
  }

  // Link classes in order of first appearance.
  std::map<std::pair<double, std::int64_t>, std::size_t> class_index;
  std::vector<std::vector<LinkId>> classes;
  for (const LinkId e : written) {
    const LinkInfo& l = t.link(e);
    const auto [it, added] =
        class_index.try_emplace({l.bandwidth_Bps, l.latency_ns}, classes.size());
    if (added) classes.emplace_back();
    classes[it->second].push_back(e);
  }
  const char* arrow = undirected ? "--" : "->";
  for (const auto& members : classes) {
    const LinkInfo& first = t.link(members.front());
    out << "subgraph{edge[bandwidth_Bps=" << exact_number(first.bandwidth_Bps)
        << ",latency_ns=" << first.latency_ns << "]\n";
    for (const LinkId e : members) {
      const LinkInfo& l = t.link(e);
      out << dot_id(t.node(l.src).name) << arrow << dot_id(t.node(l.dst).name) << '\n';
    }
    out << "}\n";
  }
  out << "}\n";
}

}  // namespace parashift::topo
