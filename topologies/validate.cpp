// Topology::validate: GPU numbering, host layout, GPU-to-GPU reachability.
#include <algorithm>
#include <numeric>
#include <set>
#include <string>

#include <boost/graph/strong_components.hpp>

#include "topologies/topology.hpp"

namespace parashift::topo {
namespace {

using Graph = Topology::Graph;
using Vertex = Graph::vertex_descriptor;

int find_root(std::vector<int>& parent, int x) {
  while (parent[x] != x) {
    parent[x] = parent[parent[x]];
    x = parent[x];
  }
  return x;
}

std::string in_quotes(const std::string& name) {
  return "'" + name + "'";
}

// Every vertex's neighbours in either direction.
std::vector<std::vector<int>> neighbours(const Topology& t) {
  std::vector<std::vector<int>> result(static_cast<std::size_t>(t.node_count()));
  for (const LinkInfo& l : t.links()) {
    result[l.src].push_back(l.dst);
    result[l.dst].push_back(l.src);
  }
  return result;
}

// Vertices reachable from `from` along links, never forwarding through a GPU.
std::vector<char> reachable_from(const Topology& t, int from) {
  const Graph& g = t.graph();
  std::vector<char> seen(static_cast<std::size_t>(t.node_count()), 0);
  std::vector<int> queue{from};
  seen[from] = 1;
  for (std::size_t i = 0; i < queue.size(); ++i) {
    const int v = queue[i];
    if (v != from && t.node(v).kind == NodeKind::Gpu) continue;
    for (const auto& e : boost::make_iterator_range(boost::out_edges(static_cast<Vertex>(v), g))) {
      const int w = static_cast<int>(boost::target(e, g));
      if (seen[w] == 0) {
        seen[w] = 1;
        queue.push_back(w);
      }
    }
  }
  return seen;
}

// Strongly connected components of the switch fabric (links between non-GPU
// vertices); a GPU is its own component.
std::vector<int> fabric_components(const Topology& t) {
  using Plain = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
  Plain fabric(static_cast<Plain::vertices_size_type>(t.node_count()));
  for (const LinkInfo& l : t.links()) {
    if (t.node(l.src).kind != NodeKind::Gpu && t.node(l.dst).kind != NodeKind::Gpu) {
      boost::add_edge(static_cast<Plain::vertex_descriptor>(l.src),
                      static_cast<Plain::vertex_descriptor>(l.dst), fabric);
    }
  }
  std::vector<int> component(static_cast<std::size_t>(t.node_count()));
  boost::strong_components(fabric, boost::make_iterator_property_map(
                                       component.begin(), boost::get(boost::vertex_index, fabric)));
  return component;
}

// True when one fabric component is entered from and left to by every GPU:
// then every GPU reaches every other through it.
bool joined_by_one_component(const Topology& t) {
  const std::vector<int> component = fabric_components(t);
  std::vector<std::set<int>> out_components(static_cast<std::size_t>(t.gpu_count()));
  std::vector<std::set<int>> in_components(static_cast<std::size_t>(t.gpu_count()));
  for (const LinkInfo& l : t.links()) {
    const NodeInfo& src = t.node(l.src);
    const NodeInfo& dst = t.node(l.dst);
    if (src.kind == NodeKind::Gpu && dst.kind != NodeKind::Gpu) {
      out_components[src.gpu_index].insert(component[l.dst]);
    }
    if (dst.kind == NodeKind::Gpu && src.kind != NodeKind::Gpu) {
      in_components[dst.gpu_index].insert(component[l.src]);
    }
  }
  for (const int c : out_components[0]) {
    bool all = true;
    for (int g = 0; g < t.gpu_count() && all; ++g) {
      all = out_components[g].count(c) > 0 && in_components[g].count(c) > 0;
    }
    if (all) return true;
  }
  return false;
}

}  // namespace

void Topology::validate(std::string_view where) {
  const std::string at = std::string(where) + ": ";
  Graph& graph = *graph_;
  const int n_gpus = gpu_count();
  if (n_gpus == 0) {
    throw TopologyError(at + "no GPU (no node of kind gpu); expected at least one");
  }
  for (int g = 0; g < n_gpus; ++g) {
    if (gpu_vertex_[g] == -1) {
      throw TopologyError(at + "no GPU has index " + std::to_string(g) +
                          "; expected GPU indices 0.." + std::to_string(n_gpus - 1) +
                          " without gaps");
    }
  }

  // ---- hosts ----------------------------------------------------------------
  int first_with = -1;
  int first_without = -1;
  for (int g = 0; g < n_gpus; ++g) {
    int& slot = graph[gpu_vertex_[g]].host >= 0 ? first_with : first_without;
    if (slot == -1) slot = g;
  }
  if (first_with != -1 && first_without != -1) {
    throw TopologyError(at + "GPU " + in_quotes(graph[gpu_vertex_[first_without]].name) +
                        " has no host but GPU " + in_quotes(graph[gpu_vertex_[first_with]].name) +
                        " has one; expected a host on every GPU or on none");
  }
  const auto nbrs = neighbours(*this);
  if (first_with == -1) {
    // Infer: GPUs joined by an NvSwitch or a direct link share a host.
    std::vector<int> parent(static_cast<std::size_t>(n_gpus));
    std::iota(parent.begin(), parent.end(), 0);
    for (int v = 0; v < node_count(); ++v) {
      const NodeInfo& info = graph[v];
      if (info.kind != NodeKind::Gpu && info.kind != NodeKind::NvSwitch) continue;
      const int anchor = info.kind == NodeKind::Gpu ? info.gpu_index : -1;
      int first = anchor;
      for (const int w : nbrs[v]) {
        if (graph[w].kind != NodeKind::Gpu) continue;
        if (first == -1) first = graph[w].gpu_index;
        parent[find_root(parent, graph[w].gpu_index)] = find_root(parent, first);
      }
    }
    std::vector<int> host_of_root(static_cast<std::size_t>(n_gpus), -1);
    int next_host = 0;
    for (int g = 0; g < n_gpus; ++g) {
      int& h = host_of_root[find_root(parent, g)];
      if (h == -1) h = next_host++;
      graph[gpu_vertex_[g]].host = h;
    }
    // An NvSwitch or NIC whose GPUs all share one host belongs to it.
    for (int v = 0; v < node_count(); ++v) {
      NodeInfo& info = graph[v];
      if ((info.kind != NodeKind::NvSwitch && info.kind != NodeKind::Nic) || info.host >= 0) {
        continue;
      }
      std::set<int> hosts;
      for (const int w : nbrs[v]) {
        if (graph[w].kind == NodeKind::Gpu) hosts.insert(graph[w].host);
      }
      if (hosts.size() == 1) info.host = *hosts.begin();
    }
  }
  int max_host = -1;
  for (int g = 0; g < n_gpus; ++g) max_host = std::max(max_host, graph[gpu_vertex_[g]].host);
  std::vector<int> per_host(static_cast<std::size_t>(max_host) + 1, 0);
  std::vector<int> example(static_cast<std::size_t>(max_host) + 1, -1);
  for (int g = 0; g < n_gpus; ++g) {
    const int h = graph[gpu_vertex_[g]].host;
    ++per_host[h];
    if (example[h] == -1) example[h] = g;
  }
  for (int h = 0; h <= max_host; ++h) {
    if (per_host[h] == 0) {
      throw TopologyError(at + "no GPU has host " + std::to_string(h) + "; expected hosts 0.." +
                          std::to_string(max_host) + " without gaps");
    }
    if (per_host[h] != per_host[0]) {
      throw TopologyError(at + "host " + std::to_string(h) + " (GPU " +
                          in_quotes(graph[gpu_vertex_[example[h]]].name) + ") has " +
                          std::to_string(per_host[h]) + " GPUs but host 0 has " +
                          std::to_string(per_host[0]) +
                          "; expected the same number of GPUs on every host");
    }
  }
  for (int v = 0; v < node_count(); ++v) {
    const NodeInfo& info = graph[v];
    if (info.host < -1 || info.host > max_host) {
      throw TopologyError(at + "node " + in_quotes(info.name) + " has host " +
                          std::to_string(info.host) + "; expected -1 (none) or a GPU host 0.." +
                          std::to_string(max_host));
    }
  }
  host_count_ = max_host + 1;
  gpus_per_host_ = per_host[0];

  // ---- reachability -----------------------------------------------------------
  if (joined_by_one_component(*this)) return;
  for (int g = 0; g < n_gpus; ++g) {
    const std::vector<char> seen = reachable_from(*this, gpu_vertex_[g]);
    for (int h = 0; h < n_gpus; ++h) {
      if (seen[gpu_vertex_[h]] == 0) {
        throw TopologyError(at + "GPU " + in_quotes(graph[gpu_vertex_[g]].name) +
                            " cannot reach GPU " + in_quotes(graph[gpu_vertex_[h]].name) +
                            "; expected every GPU to reach every other (GPUs do not forward "
                            "traffic)");
      }
    }
  }
}

}  // namespace parashift::topo
