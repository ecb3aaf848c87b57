// Topology: building and reading the graph. validate() is in validate.cpp,
// routing in route_cache.cpp.
#include "topologies/topology.hpp"

#include <cmath>
#include <sstream>
#include <string>

#include "topologies/route_cache.hpp"

namespace parashift::topo {
namespace {

std::string format_Bps(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

}  // namespace

Topology::Topology()
    : graph_(std::make_unique<Graph>()), route_cache_(std::make_unique<RouteCache>()) {}
Topology::~Topology() = default;

// Rebuilds the graph rather than copying it: the same vertices and links in
// the same order (and no false -Wmaybe-uninitialized from Boost's copy).
Topology::Topology(const Topology& other)
    : graph_(std::make_unique<Graph>()),
      links_(other.links_),
      gpu_vertex_(other.gpu_vertex_),
      host_count_(other.host_count_),
      gpus_per_host_(other.gpus_per_host_),
      route_cache_(std::make_unique<RouteCache>()) {
  for (int v = 0; v < other.node_count(); ++v) boost::add_vertex(other.node(v), *graph_);
  for (LinkId e = 0; e < link_count(); ++e) {
    boost::add_edge(static_cast<Graph::vertex_descriptor>(links_[e].src),
                    static_cast<Graph::vertex_descriptor>(links_[e].dst), LinkRef{e}, *graph_);
  }
}

Topology& Topology::operator=(const Topology& other) {
  if (this != &other) {
    Topology copy(other);
    *this = std::move(copy);
  }
  return *this;
}

Topology::Topology(Topology&& other) noexcept = default;
Topology& Topology::operator=(Topology&& other) noexcept = default;

void Topology::invalidate_routes() {
  if (route_cache_) {
    route_cache_->clear();
  } else {
    route_cache_ = std::make_unique<RouteCache>();  // after a move
  }
}

int Topology::add_node(NodeInfo info) {
  if (info.kind == NodeKind::Gpu) {
    if (info.gpu_index < 0) info.gpu_index = static_cast<int>(gpu_vertex_.size());
    if (info.gpu_index >= static_cast<int>(gpu_vertex_.size())) {
      gpu_vertex_.resize(static_cast<std::size_t>(info.gpu_index) + 1, -1);
    }
    if (gpu_vertex_[info.gpu_index] != -1) {
      throw TopologyError("GPU '" + info.name + "': gpu index " + std::to_string(info.gpu_index) +
                          " is already used by '" + node(gpu_vertex_[info.gpu_index]).name +
                          "'; expected each GPU index once");
    }
  } else {
    info.gpu_index = -1;
  }
  const int v = static_cast<int>(boost::add_vertex(info, *graph_));
  if (info.kind == NodeKind::Gpu) gpu_vertex_[info.gpu_index] = v;
  invalidate_routes();
  return v;
}

LinkId Topology::add_link(int src, int dst, double bandwidth_Bps, std::int64_t latency_ns) {
  const int n = node_count();
  if (src < 0 || src >= n || dst < 0 || dst >= n) {
    throw TopologyError("link " + std::to_string(src) + "->" + std::to_string(dst) +
                        ": endpoint out of range; expected vertices 0.." + std::to_string(n - 1));
  }
  const std::string name = node(src).name + "->" + node(dst).name;
  if (src == dst) {
    throw TopologyError("link '" + name + "': a link from a node to itself; expected two nodes");
  }
  if (!(bandwidth_Bps > 0) || !std::isfinite(bandwidth_Bps)) {
    throw TopologyError("link '" + name + "': bandwidth " + format_Bps(bandwidth_Bps) +
                        " B/s; expected a finite value > 0");
  }
  if (latency_ns < 0) {
    throw TopologyError("link '" + name + "': latency " + std::to_string(latency_ns) +
                        " ns; expected >= 0");
  }
  const LinkId id = link_count();
  links_.push_back(LinkInfo{name, src, dst, bandwidth_Bps, latency_ns});
  boost::add_edge(static_cast<Graph::vertex_descriptor>(src),
                  static_cast<Graph::vertex_descriptor>(dst), LinkRef{id}, *graph_);
  invalidate_routes();
  return id;
}

std::pair<LinkId, LinkId> Topology::add_cable(int a, int b, double bandwidth_Bps,
                                              std::int64_t latency_ns) {
  const LinkId forward = add_link(a, b, bandwidth_Bps, latency_ns);
  const LinkId backward = add_link(b, a, bandwidth_Bps, latency_ns);
  return {forward, backward};
}

void Topology::set_link_bandwidth(LinkId e, double bandwidth_Bps) {
  if (!(bandwidth_Bps > 0) || !std::isfinite(bandwidth_Bps)) {
    throw TopologyError("link '" + link(e).name + "': bandwidth " + format_Bps(bandwidth_Bps) +
                        " B/s; expected a finite value > 0");
  }
  links_.at(static_cast<std::size_t>(e)).bandwidth_Bps = bandwidth_Bps;
}

void Topology::set_link_down(LinkId e) {
  links_.at(static_cast<std::size_t>(e)).down = true;
  invalidate_routes();
}

int Topology::node_count() const {
  return static_cast<int>(boost::num_vertices(*graph_));
}
int Topology::link_count() const {
  return static_cast<int>(links_.size());
}

const NodeInfo& Topology::node(int v) const {
  if (v < 0 || v >= node_count()) throw std::out_of_range("Topology::node: bad vertex");
  return (*graph_)[static_cast<Graph::vertex_descriptor>(v)];
}

const LinkInfo& Topology::link(LinkId e) const {
  return links_.at(static_cast<std::size_t>(e));
}

LinkId Topology::find_link(int src, int dst) const {
  LinkId best = -1;
  for (const auto& e : boost::make_iterator_range(
           boost::out_edges(static_cast<Graph::vertex_descriptor>(src), *graph_))) {
    if (static_cast<int>(boost::target(e, *graph_)) == dst) {
      const LinkId id = (*graph_)[e].id;
      if (best == -1 || id < best) best = id;
    }
  }
  return best;
}

int Topology::gpu_node(int gpu_index) const {
  return gpu_vertex_.at(static_cast<std::size_t>(gpu_index));
}

int Topology::host_of_gpu(int gpu_index) const {
  return node(gpu_node(gpu_index)).host;
}

std::vector<LinkId> Topology::route(int gpu_a, int gpu_b, std::uint64_t flow_hash) const {
  if (gpu_a < 0 || gpu_a >= gpu_count() || gpu_b < 0 || gpu_b >= gpu_count()) {
    throw std::out_of_range("Topology::route: GPU index out of range");
  }
  if (gpu_a == gpu_b) return {};
  return route_cache_->route(*this, gpu_a, gpu_b, flow_hash);
}

}  // namespace parashift::topo
