#include "core/controller/aggregation_policy.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <utility>

#include "core/cost/grad_sync.hpp"
#include "core/cost/nccl_tree.hpp"
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
  if (paced < other.paced - kEps) return true;
  return paced < other.paced + kEps && excess < other.excess - kEps;
}

double LinkShare::for_flows(int flows) const {
  return healthy * std::max(left, flows / (flows + 1.0));
}

namespace {

// The link's LinkShare, or 1 where one flow would keep more than 1 - threshold.
LinkShare link_share(const LinkTelemetry& link, double iteration_s, double threshold) {
  if (link.capacity_Bps <= 0 || iteration_s <= 0) return {};
  const double healthy =
      link.nominal_Bps > 0 ? std::min(1.0, link.capacity_Bps / link.nominal_Bps) : 1.0;
  const double load = std::clamp(link.foreign_bytes / (link.capacity_Bps * iteration_s), 0.0, 1.0);
  const LinkShare share{healthy, load >= threshold ? 1 - load : 1.0};
  return share.for_flows(1) <= 1 - threshold ? share : LinkShare{};
}

}  // namespace

double edge_share(const LinkTelemetry& link, double iteration_s, double threshold) {
  return link_share(link, iteration_s, threshold).for_flows(1);
}

RingPricer::RingPricer(const ParallelPlan& plan, int group, const Capabilities::RingRoutes& routes,
                       const std::vector<std::pair<std::string, LinkShare>>& shares)
    : plan_(plan),
      group_(group),
      routes_(routes),
      tree_(routes.tree && routes.tree(group)),
      shares_(shares) {
  std::sort(shares_.begin(), shares_.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  const RankLayout layout(plan);
  const int stage = group / plan.cp;
  const int cp = group % plan.cp;
  rank_of_.resize(static_cast<std::size_t>(plan.tp));
  for (int t = 0; t < plan.tp; ++t)
    for (int replica = 0; replica < plan.dp; ++replica)
      rank_of_[static_cast<std::size_t>(t)].push_back(layout.rank({t, cp, replica, stage}));
}

const std::vector<int>& RingPricer::edge_route(int from_rank, int to_rank) {
  const std::uint64_t key =
      (static_cast<std::uint64_t>(static_cast<std::uint32_t>(from_rank)) << 32) |
      static_cast<std::uint32_t>(to_rank);
  const auto [at, added] = route_cache_.try_emplace(key);
  if (!added || routes_.host_of_rank(from_rank) == routes_.host_of_rank(to_rank)) return at->second;
  for (const std::string& link : routes_.edge_links(group_, from_rank, to_rank)) {
    const auto [index, fresh] = link_index_.try_emplace(link, static_cast<int>(link_share_.size()));
    if (fresh) {
      const auto share = std::lower_bound(
          shares_.begin(), shares_.end(), link,
          [](const auto& entry, const std::string& name) { return entry.first < name; });
      link_share_.push_back(share != shares_.end() && share->first == link ? share->second
                                                                           : LinkShare{});
      load_.push_back(0);
    }
    at->second.push_back(index->second);
  }
  return at->second;
}

double RingPricer::edge_rate(int from_rank, int to_rank) {
  double rate = 1;
  for (int link : edge_route(from_rank, to_rank))
    rate = std::min(rate, link_share_[static_cast<std::size_t>(link)].for_flows(1));
  return rate;
}

std::vector<std::vector<std::pair<int, int>>> RingPricer::collectives(
    const std::vector<int>& order) const {
  const SyncScope scope = plan_.sync == SyncMode::Flat ? SyncScope::Group : SyncScope::InterNode;
  std::vector<std::vector<std::pair<int, int>>> out;
  for (const std::vector<int>& ranks : rank_of_) {
    std::vector<int> ring;
    for (int replica : order) ring.push_back(ranks[static_cast<std::size_t>(replica)]);
    for (const auto& r : scope_rings(ring, scope, routes_.host_of_rank)) {
      if (r.size() < 2) continue;
      if (tree_) {
        out.push_back(nccl_tree_flows(r, routes_.host_of_rank).pairs);
        continue;
      }
      std::vector<std::pair<int, int>>& edges = out.emplace_back();
      for (std::size_t i = 0; i < r.size(); ++i) edges.emplace_back(r[i], r[(i + 1) % r.size()]);
    }
  }
  return out;
}

RingsScore RingPricer::score(const std::vector<int>& order) {
  RingsScore s;
  std::vector<int> touched;
  for (const auto& edges : collectives(order)) {
    touched.clear();
    for (const auto& [from, to] : edges)
      for (int link : edge_route(from, to))
        if (load_[static_cast<std::size_t>(link)]++ == 0) touched.push_back(link);
    int busiest = 0;   // flows on its busiest link, healthy
    double paced = 0;  // flows / share on its slowest link now
    for (int link : touched) {
      const auto l = static_cast<std::size_t>(link);
      busiest = std::max(busiest, load_[l]);
      const double share = link_share_[l].for_flows(load_[l]);
      paced = std::max(paced, load_[l] / share);
      s.excess += load_[l] * (1 / share - 1);
      load_[l] = 0;
    }
    if (busiest == 0) continue;
    s.worst = std::max(s.worst, paced / busiest);
    s.paced = std::max(s.paced, paced);
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
    for (const auto& edges : collectives(flatten()))
      for (const auto& [a, b] : edges)
        if (edge_rate(a, b) < 1) {
          slow_hosts.push_back(routes_.host_of_rank(a));
          slow_hosts.push_back(routes_.host_of_rank(b));
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
    const LinkShare share = link_share(l, iteration_s, threshold);
    if (share.for_flows(1) >= 1) continue;
    out.shares.emplace_back(l.link, share);
    out.congested.insert(l.link);
  }
  std::sort(out.shares.begin(), out.shares.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
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
                          const std::vector<std::pair<std::string, LinkShare>>& shares) {
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
  const std::vector<std::pair<std::string, LinkShare>>& shares = now_congested.shares;
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
    const double saved = 1 - after.paced / now.paced;
    const double gain_s = std::min(ns_to_s(sync_ns) * saved, ns_to_s(exposed_ns)) * remaining;
    const std::string message = "dp group " + std::to_string(g) + ": slowest " + pricer.shape() +
                                " " + percent(1 / now.worst) + " of its rate on " +
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
