#include "core/controller/aggregation_policy.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <utility>

#include "core/cost/grad_sync.hpp"
#include "core/rank_layout.hpp"

namespace parashift::core {
namespace {

constexpr double kEps = 1e-9;

std::string percent(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", 100 * share);
  return buf;
}

}  // namespace

bool RingsScore::better_than(const RingsScore& other) const {
  if (worst < other.worst - kEps) return true;
  return worst < other.worst + kEps && excess < other.excess - kEps;
}

double edge_share(const LinkTelemetry& link, double iteration_s, double threshold) {
  if (link.capacity_Bps <= 0 || iteration_s <= 0) return 1;
  const double healthy =
      link.nominal_Bps > 0 ? std::min(1.0, link.capacity_Bps / link.nominal_Bps) : 1.0;
  const double load = std::clamp(link.foreign_bytes / (link.capacity_Bps * iteration_s), 0.0, 1.0);
  const double share = healthy * (load >= threshold ? std::max(1 - load, 0.5) : 1.0);
  return share <= 1 - threshold ? share : 1.0;
}

RingPricer::RingPricer(const ParallelPlan& plan, int group, const Capabilities::RingRoutes& routes,
                       const std::vector<std::pair<std::string, double>>& shares)
    : plan_(plan), group_(group), routes_(routes), shares_(shares) {
  std::sort(shares_.begin(), shares_.end());
  const RankLayout layout(plan);
  const int stage = group / plan.cp;
  const int cp = group % plan.cp;
  rank_of_.resize(static_cast<std::size_t>(plan.tp));
  for (int t = 0; t < plan.tp; ++t)
    for (int replica = 0; replica < plan.dp; ++replica)
      rank_of_[static_cast<std::size_t>(t)].push_back(layout.rank({t, cp, replica, stage}));
}

double RingPricer::edge_rate(int from_rank, int to_rank) {
  if (routes_.host_of_rank(from_rank) == routes_.host_of_rank(to_rank)) return 1;  // NVLink
  const std::uint64_t key =
      (static_cast<std::uint64_t>(static_cast<std::uint32_t>(from_rank)) << 32) |
      static_cast<std::uint32_t>(to_rank);
  if (const auto cached = edge_cache_.find(key); cached != edge_cache_.end()) return cached->second;
  double rate = 1;
  for (const std::string& link : routes_.edge_links(group_, from_rank, to_rank)) {
    const auto at = std::lower_bound(shares_.begin(), shares_.end(), std::make_pair(link, 0.0));
    if (at != shares_.end() && at->first == link) rate = std::min(rate, at->second);
  }
  edge_cache_.emplace(key, rate);
  return rate;
}

std::vector<std::vector<int>> RingPricer::rings(const std::vector<int>& order) const {
  const SyncScope scope = plan_.sync == SyncMode::Flat ? SyncScope::Group : SyncScope::InterNode;
  std::vector<std::vector<int>> out;
  for (const std::vector<int>& ranks : rank_of_) {
    std::vector<int> ring;
    for (int replica : order) ring.push_back(ranks[static_cast<std::size_t>(replica)]);
    for (auto& r : scope_rings(ring, scope, routes_.host_of_rank))
      if (r.size() > 1) out.push_back(std::move(r));
  }
  return out;
}

RingsScore RingPricer::score(const std::vector<int>& order) {
  RingsScore s;
  for (const auto& ring : rings(order)) {
    double slowest = 1;
    for (std::size_t i = 0; i < ring.size(); ++i) {
      const double rate = edge_rate(ring[i], ring[(i + 1) % ring.size()]);
      slowest = std::min(slowest, rate);
      s.excess += 1 / rate - 1;
    }
    s.worst = std::max(s.worst, 1 / slowest);
  }
  return s;
}

std::vector<int> RingPricer::search(const std::vector<int>& start, int max_passes) {
  // Blocks: runs of the order's replicas on one host (their first tensor rank's).
  auto host_of_replica = [&](int replica) {
    return routes_.host_of_rank(rank_of_.front()[static_cast<std::size_t>(replica)]);
  };
  std::vector<std::vector<int>> blocks;
  for (std::size_t k = 0; k < start.size(); ++k) {
    if (k == 0 || host_of_replica(start[k]) != host_of_replica(start[k - 1])) blocks.emplace_back();
    blocks.back().push_back(start[k]);
  }
  auto flatten = [&] {
    std::vector<int> order;
    for (const auto& b : blocks) order.insert(order.end(), b.begin(), b.end());
    return order;
  };
  RingsScore best = score(start);
  for (int pass = 0; pass < max_passes && best.worst > 1 + kEps; ++pass) {
    // Hosts at either end of a slow edge: the blocks worth moving.
    std::vector<int> slow_hosts;
    for (const auto& ring : rings(flatten()))
      for (std::size_t i = 0; i < ring.size(); ++i) {
        const int a = ring[i];
        const int b = ring[(i + 1) % ring.size()];
        if (edge_rate(a, b) < 1) {
          slow_hosts.push_back(routes_.host_of_rank(a));
          slow_hosts.push_back(routes_.host_of_rank(b));
        }
      }
    std::size_t swap_i = 0, swap_j = 0;
    RingsScore found = best;
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      const int host = host_of_replica(blocks[i].front());
      if (std::find(slow_hosts.begin(), slow_hosts.end(), host) == slow_hosts.end()) continue;
      for (std::size_t j = 0; j < blocks.size(); ++j) {
        if (j == i) continue;
        std::swap(blocks[i], blocks[j]);
        const RingsScore s = score(flatten());
        std::swap(blocks[i], blocks[j]);
        if (s.better_than(found)) {
          found = s;
          swap_i = i;
          swap_j = j;
          break;  // first improvement: each pass costs one host's swaps at best
        }
      }
      if (found.better_than(best)) break;
    }
    if (!found.better_than(best)) break;
    std::swap(blocks[swap_i], blocks[swap_j]);
    best = found;
  }
  return flatten();
}

LinkCongestion link_congestion(const StepReport& report, double threshold) {
  LinkCongestion out;
  const double iteration_s = ns_to_s(report.iteration_ns);
  for (const LinkTelemetry& l : report.links) {
    const double share = edge_share(l, iteration_s, threshold);
    if (share >= 1) continue;
    out.shares.emplace_back(l.link, share);
    out.congested.insert(l.link);
  }
  std::sort(out.shares.begin(), out.shares.end());
  return out;
}

std::vector<int> ring_order(const Capabilities::RingRoutes& routes, int group, int dp) {
  std::vector<int> order = routes.order(group);
  if (static_cast<int>(order.size()) != dp) {
    order.resize(static_cast<std::size_t>(dp));
    std::iota(order.begin(), order.end(), 0);
  }
  return order;
}

double slowest_ring_share(const ParallelPlan& plan, const Capabilities::RingRoutes& routes,
                          const std::vector<std::pair<std::string, double>>& shares) {
  if (shares.empty() || !routes || plan.dp < 2) return 1;
  double worst = 1;
  for (int g = 0; g < plan.pp * plan.cp; ++g) {
    RingPricer pricer(plan, g, routes, shares);
    worst = std::max(worst, pricer.score(ring_order(routes, g, plan.dp)).worst);
  }
  return 1 / worst;
}

void AggregationPolicy::run(PolicyContext& context) {
  const StepReport* report = context.report;
  const ParallelPlan& plan = context.job.plan;
  if (report == nullptr || plan.dp < 2) return;
  const Capabilities::RingRoutes& routes = context.capabilities.ring_routes;
  const char* blind = !routes ? "the backend reports no ring routes"
                      : report->links.empty() || report->iteration_ns <= 0
                          ? "the backend reports no link telemetry (run.network: path)"
                          : nullptr;
  if (blind != nullptr) {
    if (!std::exchange(told_blind_, true))
      context.log.push_back({context.iteration, "aggregation",
                             std::string(blind) + ": rings keep their order", std::nullopt, false,
                             0, 0});
    return;
  }
  const int groups = plan.pp * plan.cp;
  LinkCongestion now_congested = link_congestion(*report, options_.threshold);
  if (now_congested.congested == congested_) return;  // nothing new since the rings were chosen
  congested_ = std::move(now_congested.congested);
  const std::vector<std::pair<std::string, double>>& shares = now_congested.shares;
  if (shares.empty()) return;
  TimeNs sync_ns = 0;  // the longest data-parallel group's sync busy time
  for (const GroupComm& g : report->comm)
    if (g.group.rfind("dp[", 0) == 0) sync_ns = std::max(sync_ns, g.busy_ns);
  // What the iteration can save is at most the communication it exposes
  // (the sync's busy time overstates a sync that overlaps backward).
  TimeNs exposed_ns = sync_ns;
  if (!report->rank_exposed_comm_ns.empty())
    exposed_ns =
        *std::max_element(report->rank_exposed_comm_ns.begin(), report->rank_exposed_comm_ns.end());
  const double remaining = static_cast<double>(
      std::max<std::int64_t>(0, context.job.total_iterations - context.iteration - 1));
  for (int g = 0; g < groups; ++g) {
    RingPricer pricer(plan, g, routes, shares);
    const std::vector<int> order = ring_order(routes, g, plan.dp);
    const RingsScore now = pricer.score(order);
    if (now.worst <= 1 + kEps) continue;  // no ring of the group crosses a congested link
    std::vector<int> next = pricer.search(order, options_.max_passes);
    const RingsScore after = pricer.score(next);
    const double saved = 1 - after.worst / now.worst;
    const double gain_s = std::min(ns_to_s(sync_ns) * saved, ns_to_s(exposed_ns)) * remaining;
    const std::string message = "dp group " + std::to_string(g) + ": slowest ring " +
                                percent(1 / now.worst) + " of its rate on " +
                                std::to_string(shares.size()) + " congested links; new order " +
                                percent(1 / after.worst);
    if (saved < options_.min_improvement || gain_s <= options_.rebuild_s) {
      if (saved > 0)
        context.log.push_back({context.iteration, "aggregation",
                               message + ": saves under min_improvement or its rebuild",
                               std::nullopt, false, gain_s, options_.rebuild_s});
      continue;
    }
    Directive d{ReorderDirective{g, next}, "aggregation: " + message, gain_s - options_.rebuild_s};
    context.directives.push_back(d);
    context.log.push_back(
        {context.iteration, "aggregation", message, d, true, gain_s, options_.rebuild_s});
  }
}

}  // namespace parashift::core
