// Shortest-path ECMP routing; see route_cache.hpp for the idea.
#include "topologies/route_cache.hpp"

#include <algorithm>
#include <string>

#include "topologies/mix64.hpp"

namespace parashift::topo {
namespace {

// Largest ball kept per destination GPU, in vertices. A fat-tree leaf cut is
// found at 11 vertices (GPU, NVSwitch, NIC, 7 peers, leaf); the cap only
// bounds the search when no single-vertex cut exists.
constexpr std::size_t kBallCap = 512;

}  // namespace

void RouteCache::clear() {
  const std::lock_guard lock(mutex_);
  if (!built_) return;
  built_ = false;
  out_begin_.clear();
  out_target_.clear();
  out_link_.clear();
  in_begin_.clear();
  in_source_.clear();
  is_gpu_.clear();
  gpu_vertex_.clear();
  targets_.clear();
  fields_.clear();
  scratch_dist_.clear();
  scratch_stamp_.clear();
}

void RouteCache::build(const Topology& topology) {
  const int n = topology.node_count();
  const auto& links = topology.links();
  out_begin_.assign(static_cast<std::size_t>(n) + 1, 0);
  in_begin_.assign(static_cast<std::size_t>(n) + 1, 0);
  for (const LinkInfo& l : links) {
    if (l.down) continue;
    ++out_begin_[l.src + 1];
    ++in_begin_[l.dst + 1];
  }
  for (int v = 0; v < n; ++v) {
    out_begin_[v + 1] += out_begin_[v];
    in_begin_[v + 1] += in_begin_[v];
  }
  const auto up = static_cast<std::size_t>(out_begin_[static_cast<std::size_t>(n)]);
  out_target_.resize(up);
  out_link_.resize(up);
  in_source_.resize(up);
  std::vector<int> out_fill(out_begin_.begin(), out_begin_.end() - 1);
  std::vector<int> in_fill(in_begin_.begin(), in_begin_.end() - 1);
  for (std::size_t e = 0; e < links.size(); ++e) {
    const LinkInfo& l = links[e];
    if (l.down) continue;
    const int k = out_fill[l.src]++;
    out_target_[k] = l.dst;
    out_link_[k] = static_cast<LinkId>(e);
    in_source_[in_fill[l.dst]++] = l.src;
  }
  is_gpu_.resize(static_cast<std::size_t>(n));
  for (int v = 0; v < n; ++v) is_gpu_[v] = topology.node(v).kind == NodeKind::Gpu ? 1 : 0;
  gpu_vertex_.resize(static_cast<std::size_t>(topology.gpu_count()));
  for (int g = 0; g < topology.gpu_count(); ++g) gpu_vertex_[g] = topology.gpu_node(g);
  targets_.resize(gpu_vertex_.size());
  fields_.resize(static_cast<std::size_t>(n));
  scratch_dist_.assign(static_cast<std::size_t>(n), kUnreached);
  scratch_stamp_.assign(static_cast<std::size_t>(n), 0);
  stamp_ = 0;
  built_ = true;
}

const RouteCache::Target& RouteCache::target(int gpu_b) {
  std::unique_ptr<Target>& slot = targets_[gpu_b];
  if (slot) return *slot;

  const int vb = gpu_vertex_[gpu_b];
  if (++stamp_ == 0) {  // wrapped: forget every old mark
    std::fill(scratch_stamp_.begin(), scratch_stamp_.end(), 0U);
    stamp_ = 1;
  }
  const auto seen = [&](int v) { return scratch_stamp_[v] == stamp_; };
  const auto expandable = [&](int v) { return v == vb || is_gpu_[v] == 0; };
  const auto snapshot = [&](const std::vector<int>& order) {
    std::vector<std::pair<int, Dist>> ball;
    ball.reserve(order.size());
    for (const int v : order) ball.emplace_back(v, scratch_dist_[v]);
    std::sort(ball.begin(), ball.end());
    return ball;
  };

  auto t = std::make_unique<Target>();
  std::vector<int> order{vb};
  scratch_stamp_[vb] = stamp_;
  scratch_dist_[vb] = 0;
  std::size_t level_begin = 0;
  Dist level = 0;
  for (;;) {
    // The ball holds every vertex within `level` of b. Find the vertices of
    // the ball that a route can enter from outside it.
    int boundary = -1;
    int boundary_count = 0;
    for (const int w : order) {
      if (!expandable(w)) continue;
      for (int k = in_begin_[w]; k < in_begin_[w + 1]; ++k) {
        if (!seen(in_source_[k])) {
          boundary = w;
          ++boundary_count;
          break;
        }
      }
      if (boundary_count > 1) break;
    }
    if (boundary_count == 0) {  // nothing outside reaches b: the ball is complete
      t->cut = -1;
      t->ball = snapshot(order);
      break;
    }
    if (boundary_count == 1) {  // a deeper single entry: keep it
      t->cut = boundary;
      t->ball = snapshot(order);
    }
    if (order.size() > kBallCap) break;
    const std::size_t level_end = order.size();
    for (std::size_t i = level_begin; i < level_end; ++i) {
      const int w = order[i];
      if (!expandable(w)) continue;
      for (int k = in_begin_[w]; k < in_begin_[w + 1]; ++k) {
        const int u = in_source_[k];
        if (seen(u)) continue;
        scratch_stamp_[u] = stamp_;
        scratch_dist_[u] = static_cast<Dist>(level + 1);
        order.push_back(u);
      }
    }
    level_begin = level_end;
    ++level;
  }
  slot = std::move(t);
  return *slot;
}

const std::vector<RouteCache::Dist>& RouteCache::field(int vertex) {
  std::vector<Dist>& f = fields_[vertex];
  if (!f.empty()) return f;
  f.assign(is_gpu_.size(), kUnreached);
  f[vertex] = 0;
  std::vector<int> queue{vertex};
  queue.reserve(is_gpu_.size());
  for (std::size_t i = 0; i < queue.size(); ++i) {
    const int w = queue[i];
    if (w != vertex && is_gpu_[w] != 0) continue;  // GPUs do not forward
    const Dist d = f[w];
    if (d + 1 >= kUnreached) {
      throw TopologyError("route: a path is longer than 65534 links; expected a smaller diameter");
    }
    for (int k = in_begin_[w]; k < in_begin_[w + 1]; ++k) {
      const int u = in_source_[k];
      if (f[u] != kUnreached) continue;
      f[u] = static_cast<Dist>(d + 1);
      queue.push_back(u);
    }
  }
  return f;
}

RouteCache::Dist RouteCache::ball_dist(const Target& t, int v) const {
  const auto it = std::lower_bound(t.ball.begin(), t.ball.end(), std::pair<int, Dist>{v, 0});
  return it != t.ball.end() && it->first == v ? it->second : kUnreached;
}

namespace {

// Walks from `from` to `goal`, each step to a next hop whose distance is one
// less; among several, the hash of (seed, vertex) picks one.
template <typename DistOf>
void walk(int from, int goal, const DistOf& dist_of, std::uint64_t seed,
          const std::vector<int>& out_begin, const std::vector<int>& out_target,
          const std::vector<LinkId>& out_link, const std::vector<char>& is_gpu,
          std::vector<LinkId>& path) {
  int v = from;
  while (v != goal) {
    const int want = static_cast<int>(dist_of(v)) - 1;
    const auto usable = [&](int w) {
      return (w == goal || is_gpu[w] == 0) && static_cast<int>(dist_of(w)) == want;
    };
    int count = 0;
    for (int k = out_begin[v]; k < out_begin[v + 1]; ++k) count += usable(out_target[k]) ? 1 : 0;
    if (count == 0) throw TopologyError("route: internal error, no next hop");
    int pick = count == 1
                   ? 0
                   : static_cast<int>(
                         mix64(seed ^ (static_cast<std::uint64_t>(v) * 0x9e3779b97f4a7c15ULL)) %
                         static_cast<std::uint64_t>(count));
    for (int k = out_begin[v]; k < out_begin[v + 1]; ++k) {
      if (!usable(out_target[k])) continue;
      if (pick-- == 0) {
        path.push_back(out_link[k]);
        v = out_target[k];
        break;
      }
    }
  }
}

}  // namespace

std::vector<LinkId> RouteCache::route(const Topology& topology, int gpu_a, int gpu_b,
                                      std::uint64_t flow_hash) {
  const std::lock_guard lock(mutex_);
  if (!built_) build(topology);
  const int va = gpu_vertex_[gpu_a];
  const int vb = gpu_vertex_[gpu_b];
  if (va < 0 || vb < 0) {
    throw TopologyError("route: GPU index without a vertex; expected a validated topology");
  }
  const Target& t = target(gpu_b);
  const std::uint64_t seed =
      mix64(mix64(static_cast<std::uint64_t>(gpu_a)) ^
            mix64(static_cast<std::uint64_t>(gpu_b) + 0x632be59bd9b4e019ULL) ^ flow_hash);
  const auto in_ball = [&](int v) { return ball_dist(t, v); };

  std::vector<LinkId> path;
  path.reserve(8);
  if (ball_dist(t, va) != kUnreached) {
    walk(va, vb, in_ball, seed, out_begin_, out_target_, out_link_, is_gpu_, path);
    return path;
  }
  const std::vector<Dist>* f = t.cut >= 0 ? &field(t.cut) : nullptr;
  if (f == nullptr || (*f)[va] == kUnreached) {
    throw TopologyError("route: GPU '" + topology.node(va).name + "' cannot reach GPU '" +
                        topology.node(vb).name + "'");
  }
  const auto in_field = [f](int v) { return (*f)[v]; };
  walk(va, t.cut, in_field, seed, out_begin_, out_target_, out_link_, is_gpu_, path);
  walk(t.cut, vb, in_ball, seed, out_begin_, out_target_, out_link_, is_gpu_, path);
  return path;
}

}  // namespace parashift::topo
