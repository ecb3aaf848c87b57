// Shortest-path ECMP routing between GPUs, cached per destination.
//
// For destination GPU b, a reverse breadth-first search from b grows a small
// "ball" of vertices level by level. When the only vertex of the ball that
// can be entered from outside is one switch s (b's leaf in a fat-tree, its
// router in a torus), every path into b passes through s, so
//   dist(v, b) = dist(v, s) + dist(s, b)   for every v outside the ball.
// The full distance field to s is computed once and shared by all GPUs
// behind s; the ball keeps the few exact distances near b. A route walks
// down the field to s, then down the ball to b, choosing among next hops
// that lower the distance by one with a hash (ECMP).
//
// GPUs are endpoints: the searches never expand through a GPU other than
// the destination, so routes never forward through a third GPU.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "topologies/topology.hpp"

namespace parashift::topo {

class RouteCache {
 public:
  /// Links from GPU a to GPU b (a != b); throws TopologyError when b is unreachable.
  std::vector<LinkId> route(const Topology& topology, int gpu_a, int gpu_b,
                            std::uint64_t flow_hash);
  /// Forgets everything (the topology changed).
  void clear();

 private:
  using Dist = std::uint16_t;
  static constexpr Dist kUnreached = 0xFFFF;

  struct Target {
    int cut = -1;  // the single entry vertex s, or -1 when the ball holds every route
    std::vector<std::pair<int, Dist>> ball;  // (vertex, dist to b), sorted by vertex
  };

  void build(const Topology& topology);
  const Target& target(int gpu_b);
  const std::vector<Dist>& field(int vertex);
  Dist ball_dist(const Target& t, int v) const;

  std::mutex mutex_;
  bool built_ = false;
  // Forward adjacency (CSR): out-links of v are [out_begin_[v], out_begin_[v+1]).
  std::vector<int> out_begin_;
  std::vector<int> out_target_;
  std::vector<LinkId> out_link_;
  // Reverse adjacency (CSR): sources of links into v.
  std::vector<int> in_begin_;
  std::vector<int> in_source_;
  std::vector<char> is_gpu_;
  std::vector<int> gpu_vertex_;
  std::vector<std::unique_ptr<Target>> targets_;  // by gpu index
  std::vector<std::vector<Dist>> fields_;         // by vertex; empty until needed
  // Scratch for the ball search.
  std::vector<Dist> scratch_dist_;
  std::vector<std::uint32_t> scratch_stamp_;
  std::uint32_t stamp_ = 0;
};

}  // namespace parashift::topo
