// HwBackend's data-parallel rings in another order (the `aggregation`
// module's lever on the executor) and the link telemetry it decides from.
// Under virtual time (hw/comm/virtual_time.hpp) every rank has a link to
// every other, named "r<from>->r<to>", whose rate a degrade event may cut;
// each rank books what its outgoing links carried, and the report lists
// every link used in the step with its bytes, busy share, rate and healthy
// rate, as the simulator lists its fabric links. A ReorderDirective
// re-splits the group's ring communicator with each member's position in
// the new order as its key, so the replicated optimizer's gradient
// all-reduce (MPI's, NCCL's ring: the communicator's rank order) runs
// around the new order; the distributed optimizer's reduce-scatter keeps
// the launch order (its shards belong to replicas), so the routes are not
// offered for it.
#include <algorithm>
#include <string>

#include "core/directive.hpp"
#include "hw/comm/virtual_time.hpp"
#include "hw/exec/hw_backend.hpp"

namespace parashift::hw {

namespace {

std::string link_name(int from, int to) {
  return "r" + std::to_string(from) + "->r" + std::to_string(to);
}

// Per world rank: bytes, busy ns.
constexpr std::size_t kEdgeFields = 2;

}  // namespace

core::Capabilities::RingRoutes HwBackend::ring_routes() const {
  core::Capabilities::RingRoutes routes;
  if (virtual_world_ == nullptr || sharded_optimizer()) return routes;
  routes.host_of_rank = [](int rank) { return rank; };  // a link between every two ranks
  routes.edge_links = [](int, int from_rank, int to_rank) {
    return std::vector<std::string>{link_name(from_rank, to_rank)};
  };
  routes.order = [this](int group) {
    const auto g = static_cast<std::size_t>(group);
    return g < dp_orders_.size() ? dp_orders_[g] : std::vector<int>{};
  };
  return routes;
}

void HwBackend::reorder(const core::ReorderDirective& directive) {
  core::check_reorder(directive, plan_.pp * plan_.cp, plan_.dp);
  dp_orders_.resize(static_cast<std::size_t>(plan_.pp * plan_.cp));
  dp_orders_[static_cast<std::size_t>(directive.group)] = directive.order;
  // Every rank takes part in the split: the others keep their order.
  const auto& c = groups_.coord;
  const std::vector<int>& order = dp_orders_[static_cast<std::size_t>(c.pp * plan_.cp + c.cp)];
  const auto at = std::find(order.begin(), order.end(), c.dp);
  const int key = order.empty() ? c.dp : static_cast<int>(at - order.begin());
  groups_.dp_ring = world_.split(dp_color(plan_, c), key);
  groups_.dp_ring->barrier();  // the new ring's set-up handshake
}

std::size_t HwBackend::edge_fields() const {
  return virtual_world_ == nullptr ? 0 : kEdgeFields * static_cast<std::size_t>(world_.size());
}

std::vector<double> HwBackend::pack_edges() const {
  std::vector<double> out(edge_fields(), 0.0);
  if (virtual_world_ == nullptr) return out;
  for (const auto& [to, use] : virtual_world_->edges()) {
    out[kEdgeFields * static_cast<std::size_t>(to)] = use.bytes;
    out[kEdgeFields * static_cast<std::size_t>(to) + 1] = static_cast<double>(use.busy_ns);
  }
  return out;
}

std::vector<core::LinkTelemetry> HwBackend::links_of(const std::vector<double>& all,
                                                     std::size_t stride, std::size_t offset,
                                                     core::TimeNs iteration_ns) const {
  std::vector<core::LinkTelemetry> links;
  if (virtual_world_ == nullptr || iteration_ns <= 0) return links;
  const VirtualLink& link = virtual_world_->link();
  const core::TimeNs now = virtual_world_->clock().now_ns();
  const int ranks = world_.size();
  for (int from = 0; from < ranks; ++from)
    for (int to = 0; to < ranks; ++to) {
      const double* use = all.data() + static_cast<std::size_t>(from) * stride + offset +
                          kEdgeFields * static_cast<std::size_t>(to);
      if (use[0] <= 0) continue;
      core::LinkTelemetry t;
      t.link = link_name(from, to);
      t.bytes = use[0];
      t.utilisation = std::min(1.0, use[1] / static_cast<double>(iteration_ns));
      t.capacity_Bps = link.Bps_between(now, from, to);
      t.nominal_Bps = link.Bps;
      links.push_back(t);
    }
  return links;
}

}  // namespace parashift::hw
