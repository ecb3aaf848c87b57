// The cluster graph: GPUs, switches and NICs joined by directed links, with
// shortest-path ECMP routing between GPUs. Also declares how topologies are
// made (generators), read (DOT, GraphML) and written (DOT); those live in
// their own source files.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "core/errors.hpp"

namespace parashift::topo {

/// Bad user input (a topology file, a generator parameter). The message names
/// the file or generator, the element or parameter, and what was expected.
class TopologyError : public core::InputError {
 public:
  using core::InputError::InputError;
};

enum class NodeKind { Gpu, NvSwitch, Nic, Leaf, Spine, Core, Router };

/// "gpu", "nvswitch", "nic", "leaf", "spine", "core", "router" (the file spelling).
std::string_view to_string(NodeKind kind);
/// The inverse of to_string; nullopt for anything else.
std::optional<NodeKind> parse_node_kind(std::string_view text);

struct NodeInfo {
  std::string name;
  NodeKind kind = NodeKind::Gpu;
  int gpu_index = -1;  // 0..gpu_count-1 for GPUs, -1 otherwise
  int host = -1;       // server index for GPU / NvSwitch / Nic, -1 when none
};

/// One direction of a cable: traffic flows from src to dst.
struct LinkInfo {
  std::string name;  // "src->dst"
  int src = -1;
  int dst = -1;
  double bandwidth_Bps = 0;
  std::int64_t latency_ns = 0;
  bool down = false;  // failed: no route uses it (Topology::set_link_down)
};

using LinkId = int;

class RouteCache;

class Topology {
 public:
  /// The edge bundle: the index of the link in links().
  struct LinkRef {
    LinkId id = -1;
  };
  using Graph =
      boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, NodeInfo, LinkRef>;

  Topology();
  ~Topology();
  Topology(const Topology& other);
  Topology& operator=(const Topology& other);
  Topology(Topology&& other) noexcept;
  Topology& operator=(Topology&& other) noexcept;

  // ---- building -------------------------------------------------------------
  /// Adds a vertex. A GPU with gpu_index -1 gets the next free index; a GPU
  /// index used twice throws TopologyError.
  int add_node(NodeInfo info);
  /// One directed link; bandwidth must be > 0 and latency >= 0 (TopologyError).
  LinkId add_link(int src, int dst, double bandwidth_Bps, std::int64_t latency_ns);
  /// A cable: two directed links, a->b then b->a (ids returned in that order).
  std::pair<LinkId, LinkId> add_cable(int a, int b, double bandwidth_Bps, std::int64_t latency_ns);
  /// Changes one link's bandwidth (e.g. a degraded cable); routes are unchanged.
  void set_link_bandwidth(LinkId e, double bandwidth_Bps);
  /// Takes one link out of service (a failed cable): routes are computed
  /// again without it, and a GPU it cut off is unreachable (route throws).
  void set_link_down(LinkId e);
  /// Checks the topology and derives the host layout. Throws TopologyError,
  /// prefixed with `where`, when: there is no GPU; GPU indices have gaps;
  /// some GPUs have a host and others not; hosts are not 0..H-1 or hold
  /// different GPU counts; a GPU cannot reach every other GPU. When no GPU has
  /// a host, hosts are inferred: GPUs joined through an NvSwitch (or a direct
  /// GPU-GPU link) share a host. Generators and loaders return validated
  /// topologies.
  void validate(std::string_view where = "topology");

  // ---- reading --------------------------------------------------------------
  int node_count() const;
  int link_count() const;
  const NodeInfo& node(int v) const;
  const LinkInfo& link(LinkId e) const;
  const std::vector<LinkInfo>& links() const { return links_; }
  const Graph& graph() const { return *graph_; }
  /// The link src->dst with the lowest id, or -1.
  LinkId find_link(int src, int dst) const;

  int gpu_count() const { return static_cast<int>(gpu_vertex_.size()); }
  int gpu_node(int gpu_index) const;  // graph vertex of GPU i
  // Host layout: valid after validate().
  int host_count() const { return host_count_; }
  int gpus_per_host() const { return gpus_per_host_; }
  int host_of_gpu(int gpu_index) const;

  /// Directed links from GPU a to GPU b along a shortest path (fewest links).
  /// GPUs are endpoints only: a route never passes through a third GPU.
  /// Among equal-cost paths, each switch picks its next hop by hashing
  /// (gpu_a, gpu_b, flow_hash, switch) — ECMP; the same arguments always give
  /// the same route. Empty when a == b. Thread-safe; per-destination routing
  /// state is computed on first use and cached.
  std::vector<LinkId> route(int gpu_a, int gpu_b, std::uint64_t flow_hash = 0) const;

 private:
  void invalidate_routes();

  std::unique_ptr<Graph> graph_;  // behind a pointer: adjacency_list has no move
  std::vector<LinkInfo> links_;
  std::vector<int> gpu_vertex_;  // by gpu index; -1 for a gap not yet filled
  int host_count_ = 0;
  int gpus_per_host_ = 0;
  std::unique_ptr<RouteCache> route_cache_;
};

/// Builds a topology by generator name from string parameters (as written in
/// YAML). Unknown generator, unknown parameter, missing required parameter or
/// bad value -> TopologyError naming it and what was expected. Generators and
/// their parameters are listed in topologies/README.md and generators.hpp.
Topology generate_topology(const std::string& generator,
                           const std::map<std::string, std::string>& params);
/// Names accepted by generate_topology, sorted.
std::vector<std::string> generator_names();

/// Loads a Graphviz (.dot, .gv) or GraphML (.graphml) file, chosen by
/// extension, and validates it. Any problem -> TopologyError naming the file.
Topology load_topology(const std::filesystem::path& file);
/// Writes the topology as Graphviz DOT that load_topology reads back: an
/// undirected `graph` of cables when every link has an identical reverse
/// link, a `digraph` otherwise.
void write_dot(const Topology& topology, std::ostream& out);

}  // namespace parashift::topo
