// The `aggregation` policy module: re-chooses the order of each
// data-parallel group's rings from the congestion the links report, so the
// ring's edges between nodes leave the links another tenant loads or that
// run degraded (C4P, the path allocation of Alibaba's C4, steers flows off
// busy links the same way; here the lever is the ring's order, which
// changes the node pairs a ring connects and so the routes ECMP gives them).
// Where the backend runs a group's all-reduce as NCCL's double binary trees
// between nodes (RingRoutes::tree), the order is the trees' too: their roots
// and interior nodes follow it (core::nccl_tree_flows), and the module
// prices and moves the trees' edges instead of the ring's.
//
// Each iteration it reads StepReport::links and gives each link the share
// of its healthy rate a ring edge would get there (edge_share): its rate
// now over its nominal one (a degraded link), times max(1 - u, 1/2) when
// another tenant's bytes fill u >= `threshold` of its capacity over the
// iteration (max-min against one foreign aggregate of equal weight). A
// link whose share is at most 1 - threshold is congested. When the set of
// congested links changes, it prices every data-parallel group's rings as
// the backend runs them (Capabilities::ring_routes: flat sync rings over
// the group; hierarchical and delayed over one rail between nodes,
// core::scope_rings): each collective's flows load the links their routes
// cross (a ring one flow an edge; a tree's interior node four on its NIC,
// a root two or three), and it runs at the pace of its busiest link for the
// share it gets there: its slowdown is max over links of flows / share over
// max over links of flows, so a congested link carrying fewer of its flows
// than its busiest link slows it less, or not at all. A group's sync runs
// at its slowest collective's pace. It then searches orders that keep each host's
// replicas together (first-improvement hill-climbing over swaps of a host
// at either end of a congested edge with any other host) and issues a
// ReorderDirective when the best saves at least min_improvement of the
// group's sync time and the saving over the remaining run (the group's
// measured sync busy time x the saved share, at most the most any rank's
// exposed communication, x iterations left) exceeds rebuild_s, the new
// communicator's cost (core::kRingRebuildNs). Acting only when the
// congested set changes is its hysteresis: a ring that moved is not moved back while the
// congestion stays where it was. The order each group runs now is the
// backend's (RingRoutes::order): the module keeps none of its own, so a
// re-plan or a rebuilt module cannot leave it believing another.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/controller/policy_module.hpp"

namespace parashift::core {

struct AggregationOptions {
  double threshold = 0.25;        // share of a healthy link's rate lost that congests it
  double min_improvement = 0.05;  // least share of a group's sync time a new order saves
  double rebuild_s = 1.0;         // a new communicator (core::kRingRebuildNs)
  int max_passes = 32;            // swaps per group and evaluation
};

/// How a group's rings (or trees) fare under the congestion. `worst`: the
/// slowdown of its slowest collective over its own healthy pace (1: none is
/// slowed). Orders compare by `paced`, the group's time in flows per link
/// (max over its collectives and links of flows / share: an order whose
/// flows collide on a link is no faster for a ratio of 1), then by the
/// excess over all congested links, sum of flows x (1 / share - 1), which
/// counts slow links a collective crosses more than one of (so a swap that
/// mends one of them is seen).
struct RingsScore {
  double worst = 1;
  double paced = 0;
  double excess = 0;
  bool better_than(const RingsScore& other) const;
};

/// What a link leaves the job's flows: `healthy`, its rate now over its
/// healthy one, times, where another tenant's bytes fill u >= threshold of
/// it, max(`left` = 1 - u, n / (n + 1)) for n of the job's flows on it
/// (max-min against the tenant's one flow of equal weight: one ring edge
/// gets 1/2, a tree node's four flows 4/5). A bare number is a degraded
/// rate alone (left 1).
struct LinkShare {
  double healthy = 1;
  double left = 1;
  LinkShare(double healthy_share = 1, double left_share = 1)  // NOLINT: a rate alone converts
      : healthy(healthy_share), left(left_share) {}
  /// The share of its healthy rate `flows` flows of the job get together.
  double for_flows(int flows) const;
};

/// The share of its healthy rate a ring edge (one flow) gets on `link` (1:
/// the link is not congested at `threshold`), as the module header says.
double edge_share(const LinkTelemetry& link, double iteration_s, double threshold);

/// What a step's link telemetry says: each congested link's share (sorted
/// by name; congested: its edge_share is under 1) and their names.
struct LinkCongestion {
  std::vector<std::pair<std::string, LinkShare>> shares;
  std::set<std::string> congested;
};
LinkCongestion link_congestion(const StepReport& report, double threshold);

/// The order group `group`'s rings run in now (routes.order; the
/// launcher's 0..dp-1 where the backend gives none).
std::vector<int> ring_order(const Capabilities::RingRoutes& routes, int group, int dp);

/// The ring orders of one data-parallel group priced against the congested
/// links (link name -> edge_share, congested links only).
class RingPricer {
 public:
  RingPricer(const ParallelPlan& plan, int group, const Capabilities::RingRoutes& routes,
             const std::vector<std::pair<std::string, LinkShare>>& shares);
  /// `order`: position k of every ring is replica order[k].
  RingsScore score(const std::vector<int>& order);
  /// "tree" where the group's all-reduce runs as NCCL's trees, else "ring".
  const char* shape() const { return tree_ ? "tree" : "ring"; }
  /// The best order hill-climbing finds from `start` (max_passes swaps).
  std::vector<int> search(const std::vector<int>& start, int max_passes);

 private:
  /// The links (indices into link_share_) an edge's route between hosts
  /// crosses; none inside a host (NVLink).
  const std::vector<int>& edge_route(int from_rank, int to_rank);
  /// The least share along the edge's route (1: it crosses no congested link).
  double edge_rate(int from_rank, int to_rank);
  /// Every collective the sync runs for `order`, as its edges (from, to
  /// rank): a ring's neighbours, or each tree edge both ways.
  std::vector<std::vector<std::pair<int, int>>> collectives(const std::vector<int>& order) const;

  ParallelPlan plan_;  // a copy: a pricer outlives the temporary it may be built from
  int group_;
  const Capabilities::RingRoutes& routes_;
  bool tree_ = false;                                      // the group runs NCCL's trees
  std::vector<std::pair<std::string, LinkShare>> shares_;  // sorted by name
  std::vector<std::vector<int>> rank_of_;  // [tensor rank][replica]: the group's ranks
  std::unordered_map<std::string, int> link_index_;
  std::vector<LinkShare> link_share_;  // by link index (1: not congested)
  std::unordered_map<std::uint64_t, std::vector<int>> route_cache_;  // by (from, to) rank
  std::vector<int> load_;                                            // scratch: flows per link
};

/// The share of its healthy rate the plan's slowest data-parallel ring
/// gets on the congested links (`shares`, link_congestion), as the rings
/// run now: 1 / the worst RingsScore over the plan's groups (1: no ring
/// crosses a congested link).
double slowest_ring_share(const ParallelPlan& plan, const Capabilities::RingRoutes& routes,
                          const std::vector<std::pair<std::string, LinkShare>>& shares);

class AggregationPolicy : public PolicyModule {
 public:
  explicit AggregationPolicy(AggregationOptions options) : options_(options) {}
  void run(PolicyContext& context) override;

 private:
  AggregationOptions options_;
  std::set<std::string> congested_;  // at the last evaluation
  bool told_blind_ = false;          // said once that the backend shows no routes or links
};

}  // namespace parashift::core
