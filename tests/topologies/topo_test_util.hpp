// Helpers shared by the topology suites.
#pragma once

#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "topologies/topology.hpp"

namespace parashift::topo::test {

inline std::string data_file(const std::string& name) {
  return std::string(PARASHIFT_SOURCE_DIR) + "/tests/topologies/data/" + name;
}

/// The TopologyError message `f` throws, or "" when it throws none.
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const TopologyError& e) {
    return e.what();
  }
  return "";
}

/// Fewest links from GPU a to GPU b, never forwarding through a GPU; plain
/// BFS, the reference for route().
inline int bfs_hops(const Topology& t, int gpu_a, int gpu_b) {
  const int from = t.gpu_node(gpu_a);
  const int to = t.gpu_node(gpu_b);
  std::vector<int> dist(static_cast<std::size_t>(t.node_count()), -1);
  std::vector<std::vector<int>> out(static_cast<std::size_t>(t.node_count()));
  for (const LinkInfo& l : t.links()) out[l.src].push_back(l.dst);
  std::deque<int> queue{from};
  dist[from] = 0;
  while (!queue.empty()) {
    const int v = queue.front();
    queue.pop_front();
    if (v == to) return dist[v];
    if (v != from && t.node(v).kind == NodeKind::Gpu) continue;
    for (const int w : out[v]) {
      if (dist[w] == -1) {
        dist[w] = dist[v] + 1;
        queue.push_back(w);
      }
    }
  }
  return -1;
}

/// True when `path` is a chain of links from GPU a to GPU b through no other GPU.
inline bool is_path(const Topology& t, const std::vector<LinkId>& path, int gpu_a, int gpu_b) {
  int at = t.gpu_node(gpu_a);
  for (std::size_t i = 0; i < path.size(); ++i) {
    const LinkInfo& l = t.link(path[i]);
    if (l.src != at) return false;
    at = l.dst;
    if (i + 1 < path.size() && t.node(at).kind == NodeKind::Gpu) return false;
  }
  return at == t.gpu_node(gpu_b);
}

/// The vertices a route visits after the source.
inline std::vector<std::string> hops(const Topology& t, const std::vector<LinkId>& path) {
  std::vector<std::string> names;
  for (const LinkId e : path) names.push_back(t.node(t.link(e).dst).name);
  return names;
}

}  // namespace parashift::topo::test
