// The simulator's data-parallel rings in another order (the `aggregation`
// module's lever): what it tells the policy of its routes, and how it takes
// a ReorderDirective.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/cost/replan_cost.hpp"
#include "sim/collective.hpp"
#include "sim/sim_backend.hpp"

namespace parashift::sim {

core::Capabilities::RingRoutes SimBackend::ring_routes() const {
  core::Capabilities::RingRoutes routes;
  routes.host_of_rank = [this](int rank) {
    return paths_.topology().host_of_gpu(gpu_of_rank(rank));
  };
  // An edge's network leg as the ring's or the trees' flows send it: from the
  // sender's node's GPU on the receiver's rail (PXN), hashed by the group's
  // index (sim/iteration.cpp's flow hash of its gradient sync).
  routes.edge_links = [this](int group, int from_rank, int to_rank) {
    const topo::Topology& t = paths_.topology();
    const int a = gpu_of_rank(from_rank);
    const int b = gpu_of_rank(to_rank);
    std::vector<std::string> names;
    for (const topo::LinkId id : t.route(pxn_source(t, a, b), b, static_cast<std::uint64_t>(group)))
      names.push_back(t.link(id).name);
    return names;
  };
  // What the last iteration's gradient sync ran (IterationResult::dp_group_tree).
  routes.tree = [this](int group) {
    const auto g = static_cast<std::size_t>(group);
    return last_ && g < last_->dp_group_tree.size() && last_->dp_group_tree[g] != 0;
  };
  routes.order = [this](int group) {
    const auto g = static_cast<std::size_t>(group);
    return g < dp_orders_.size() ? dp_orders_[g] : std::vector<int>{};
  };
  return routes;
}

void SimBackend::reorder(const core::ReorderDirective& directive) {
  const core::ParallelPlan& plan = plan_now();
  const int groups = plan.pp * plan.cp;
  core::check_reorder(directive, groups, plan.dp);
  dp_orders_.resize(static_cast<std::size_t>(groups));
  dp_orders_[static_cast<std::size_t>(directive.group)] = directive.order;
  pending_move_ns_ += core::kRingRebuildNs;
}

}  // namespace parashift::sim
