// The `aggregation` module: ring orders priced against the links another
// tenant loads, and when it re-orders (core/controller/aggregation_policy).
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "core/controller/aggregation_policy.hpp"
#include "core/controller/state_estimate.hpp"

using namespace parashift::core;

namespace {

// dp 4 replicas, one per host (tp 1, pp 1: rank r is replica r on host r),
// flat sync. A ring edge between hosts a and b crosses one link, "a-b".
struct Fixture {
  JobModel job;
  Capabilities caps;
  StateEstimate state;
  std::vector<StragglerFinding> stragglers;
  std::vector<Directive> directives;
  std::vector<Decision> log;

  Fixture() : state(plan(), 4) {
    job.plan = plan();
    job.total_iterations = 100;
    caps.ring_routes.host_of_rank = [](int rank) { return rank; };
    caps.ring_routes.edge_links = [](int, int from, int to) {
      return std::vector<std::string>{std::to_string(from) + "-" + std::to_string(to)};
    };
    caps.ring_routes.order = [this](int) { return applied; };
  }
  std::vector<int> applied;  // the ring order the "backend" runs (empty: in order)
  static ParallelPlan plan() {
    ParallelPlan p;
    p.tp = 1;
    p.pp = 1;
    p.dp = 4;
    p.cp = 1;
    p.global_batch = 4;
    return p;
  }
  // An iteration of 1 s whose gradient sync kept dp[stage 0] busy 1 s;
  // `link` carried another tenant's bytes at `share` of its 10 GB/s.
  StepReport report(std::int64_t iteration, const std::string& link, double share) const {
    StepReport r;
    r.iteration = iteration;
    r.iteration_ns = kNsPerS;
    r.comm = {{"dp[stage 0]", "all-reduce", kNsPerS, 1e9}};
    r.links = {{"0-1", 1e9, 0.5, 0, 10e9}, {link, share * 10e9, 1.0, share * 10e9, 10e9}};
    return r;
  }
  // One iteration; a re-order the module issues is applied at once.
  void run(AggregationPolicy& module, const StepReport& r) {
    PolicyContext c{r.iteration, 0, job, state, caps, stragglers, directives, log};
    c.report = &r;
    module.run(c);
    for (const Directive& d : directives)
      if (const auto* o = std::get_if<ReorderDirective>(&d.action)) applied = o->order;
  }
};

bool has_edge(const std::vector<int>& ring, int a, int b) {
  for (std::size_t i = 0; i < ring.size(); ++i)
    if (ring[i] == a && ring[(i + 1) % ring.size()] == b) return true;
  return false;
}

}  // namespace

TEST_CASE("aggregation: a ring edge on a loaded link is re-ordered away from it, once") {
  Fixture f;
  AggregationPolicy module{AggregationOptions{}};
  // Link 1-2 carries 80% of its capacity for another tenant: the ring
  // 0->1->2->3->0 gets max(1 - 0.8, 1/2) = 1/2 of it there, so the group's
  // sync runs 2x slower. Any order without the edge 1->2 runs at full rate
  // (every other link is free): saved 1 - 1/2 = 1/2 of the 1 s sync, over
  // 99 iterations left = 49.5 s, less the 1 s rebuild = 48.5 s.
  f.run(module, f.report(0, "1-2", 0.8));
  REQUIRE(f.directives.size() == 1);
  const auto* d = std::get_if<ReorderDirective>(&f.directives[0].action);
  REQUIRE(d != nullptr);
  CHECK(d->group == 0);
  std::vector<int> sorted = d->order;
  std::sort(sorted.begin(), sorted.end());
  CHECK(sorted == std::vector<int>{0, 1, 2, 3});
  CHECK_FALSE(has_edge(d->order, 1, 2));
  CHECK(f.directives[0].predicted_gain_s == doctest::Approx(48.5));
  REQUIRE(f.log.size() == 1);
  CHECK(f.log[0].applied);
  CHECK(f.log[0].cost_s == doctest::Approx(1.0));
  // The same congestion next iteration: the rings already avoid it.
  f.run(module, f.report(1, "1-2", 0.8));
  CHECK(f.directives.size() == 1);
  // A module made anew (a re-plan or a rule rebuilds it) reads the order
  // the backend runs, which avoids the load: nothing to do either.
  AggregationPolicy rebuilt{AggregationOptions{}};
  f.run(rebuilt, f.report(1, "1-2", 0.8));
  CHECK(f.directives.size() == 1);
  // The load moves to the edge the new order ends on: re-ordered again,
  // away from that one too.
  const int last = d->order.back();
  const int first = d->order.front();
  const std::string moved = std::to_string(last) + "-" + std::to_string(first);
  f.run(module, f.report(2, moved, 0.9));
  REQUIRE(f.directives.size() == 2);
  const auto* again = std::get_if<ReorderDirective>(&f.directives[1].action);
  REQUIRE(again != nullptr);
  CHECK_FALSE(has_edge(again->order, last, first));
}

TEST_CASE("aggregation: a light load, a short run left or no routes change nothing") {
  SUBCASE("foreign load under the threshold (20% < 25%)") {
    Fixture f;
    AggregationPolicy module{AggregationOptions{}};
    f.run(module, f.report(0, "1-2", 0.2));
    CHECK(f.directives.empty());
    CHECK(f.log.empty());
  }
  SUBCASE("one iteration left: saves 0.5 s, under the 1 s rebuild") {
    Fixture f;
    f.job.total_iterations = 2;
    AggregationPolicy module{AggregationOptions{}};
    f.run(module, f.report(0, "1-2", 0.8));
    CHECK(f.directives.empty());
    REQUIRE(f.log.size() == 1);
    CHECK_FALSE(f.log[0].applied);
    CHECK(f.log[0].gain_s == doctest::Approx(0.5));
  }
  SUBCASE("a sync mostly hidden: the gain is at most the exposed communication") {
    // Ranks expose 0.1 s and 0.2 s of communication: the 0.5 s the new
    // order saves of the sync is capped at 0.2 s an iteration, x 99 = 19.8 s.
    Fixture f;
    AggregationPolicy module{AggregationOptions{}};
    StepReport r = f.report(0, "1-2", 0.8);
    r.rank_exposed_comm_ns = {100'000'000, 200'000'000};
    f.run(module, r);
    REQUIRE(f.directives.size() == 1);
    CHECK(f.log[0].gain_s == doctest::Approx(19.8));
  }
  SUBCASE("a load on a link no ring edge crosses") {
    Fixture f;
    AggregationPolicy module{AggregationOptions{}};
    f.run(module, f.report(0, "9-9", 1.0));
    CHECK(f.directives.empty());
  }
  SUBCASE("a backend without ring routes: said once") {
    Fixture f;
    f.caps.ring_routes = {};
    AggregationPolicy module{AggregationOptions{}};
    f.run(module, f.report(0, "1-2", 0.8));
    f.run(module, f.report(1, "1-2", 0.8));
    CHECK(f.directives.empty());
    REQUIRE(f.log.size() == 1);
    CHECK(f.log[0].message == "the backend reports no ring routes: rings keep their order");
  }
  SUBCASE("a report without link telemetry: said once") {
    Fixture f;
    AggregationPolicy module{AggregationOptions{}};
    StepReport r = f.report(0, "1-2", 0.8);
    r.links.clear();
    f.run(module, r);
    r.iteration = 1;
    f.run(module, r);
    CHECK(f.directives.empty());
    REQUIRE(f.log.size() == 1);
    CHECK(f.log[0].message ==
          "the backend reports no link telemetry (run.network: path): rings keep their order");
  }
}

TEST_CASE("ring pricer: the slowest edge sets a ring's rate, hierarchical rings run per rail") {
  Fixture f;
  ParallelPlan p = Fixture::plan();
  // Two congested links on the identity ring: an edge gets 0.5 of 1-2 and
  // 0.7 of 3-0: the ring runs at 0.5, a 2x slowdown.
  const std::vector<std::pair<std::string, LinkShare>> shares{{"1-2", 0.5}, {"3-0", 0.7}};
  RingPricer pricer(p, 0, f.caps.ring_routes, shares);
  // Excess: (1/0.5 - 1) + (1/0.7 - 1) = 1 + 3/7.
  const RingsScore s = pricer.score({0, 1, 2, 3});
  CHECK(s.worst == doctest::Approx(2.0));
  CHECK(s.excess == doctest::Approx(1 + 3.0 / 7));
  // Reversed order (0 3 2 1) crosses 0-3, 3-2, 2-1, 1-0: none loaded.
  CHECK(pricer.score({0, 3, 2, 1}).worst == doctest::Approx(1.0));
  // Two replicas per host (hosts 0, 0, 1, 1): hierarchical sync's rings
  // between nodes are one per place on the host, (0 2) and (1 3); their
  // edges 0-2, 2-0, 1-3, 3-1; the 1-2 load is inside no ring.
  Fixture h;
  h.caps.ring_routes.host_of_rank = [](int rank) { return rank / 2; };
  p.sync = SyncMode::Hierarchical;
  RingPricer rails(p, 0, h.caps.ring_routes, {{"1-2", 0.5}, {"3-1", 0.5}});
  const RingsScore r = rails.score({0, 1, 2, 3});
  CHECK(r.worst == doctest::Approx(1 / 0.5));
  CHECK(r.excess == doctest::Approx(1.0));  // ring (0 2) free; edge 3-1 at 1/2
}

TEST_CASE("edge share: a foreign load and a degraded rate, each congesting past the threshold") {
  // Iteration 1 s.
  auto link = [](double foreign_bytes, double capacity_Bps, double nominal_Bps) {
    return LinkTelemetry{"l", foreign_bytes, 0.5, foreign_bytes, capacity_Bps, nominal_Bps};
  };
  // A tenant filling 80% of 10 GB/s: max(1 - 0.8, 1/2) = 0.5 of the link.
  CHECK(edge_share(link(8e9, 10e9, 10e9), 1.0, 0.25) == doctest::Approx(0.5));
  // 20% of it: under the threshold, not congested (share 1).
  CHECK(edge_share(link(2e9, 10e9, 10e9), 1.0, 0.25) == 1.0);
  // Degraded to 2 of 10 GB/s, no tenant: 0.2 of its healthy rate.
  CHECK(edge_share(link(0, 2e9, 10e9), 1.0, 0.25) == doctest::Approx(0.2));
  // Degraded to 8 of 10: 0.8 > 1 - 0.25, not congested.
  CHECK(edge_share(link(0, 8e9, 10e9), 1.0, 0.25) == 1.0);
  // Both: at half its rate, a tenant filling 60% of what is left: 0.5 x 0.5.
  CHECK(edge_share(link(3e9, 5e9, 10e9), 1.0, 0.25) == doctest::Approx(0.25));
  // No capacity known: nothing to judge.
  CHECK(edge_share(link(8e9, 0, 0), 1.0, 0.25) == 1.0);
}

TEST_CASE("aggregation: a degraded link congests as a loaded one does") {
  // Link 1-2 at 2 of its 10 GB/s, no tenant: the ring gets 0.2 of it, a 5x
  // slower sync; any order without 1->2 runs at full rate: saved 1 - 1/5 =
  // 0.8 of the 1 s sync over 99 iterations = 79.2 s, less the 1 s rebuild.
  Fixture f;
  AggregationPolicy module{AggregationOptions{}};
  StepReport r = f.report(0, "1-2", 0);
  r.links[1].capacity_Bps = 2e9;
  r.links[1].nominal_Bps = 10e9;
  f.run(module, r);
  REQUIRE(f.directives.size() == 1);
  CHECK(f.directives[0].predicted_gain_s == doctest::Approx(78.2));
  CHECK_FALSE(has_edge(std::get<ReorderDirective>(f.directives[0].action).order, 1, 2));
}

TEST_CASE("ring pricer: a ring with two slow edges is mended one swap at a time") {
  // 8 hosts, one replica each, flat sync; loads on edges 1-2 and 5-6 of the
  // identity ring. Mending either alone leaves the ring at 1/2 (worst
  // unchanged), so only the excess shows the first swap is progress; the
  // search must end with neither edge in the ring.
  Fixture f;
  ParallelPlan p = Fixture::plan();
  p.dp = 8;
  RingPricer pricer(p, 0, f.caps.ring_routes, {{"1-2", 0.5}, {"5-6", 0.5}});
  const std::vector<int> start{0, 1, 2, 3, 4, 5, 6, 7};
  CHECK(pricer.score(start).excess == doctest::Approx(2.0));
  const std::vector<int> found = pricer.search(start, 32);
  CHECK(pricer.score(found).worst == doctest::Approx(1.0));
  CHECK_FALSE(has_edge(found, 1, 2));
  CHECK_FALSE(has_edge(found, 5, 6));
}

TEST_CASE("ring pricer: a ring's own flows colliding on a link set its healthy pace") {
  // 4 hosts, flat rings; edges 0->1 and 2->3 both cross link "s" (ECMP put
  // them on one spine) besides their own "a-b" links. A tenant fills 80%
  // of s: one flow would keep max(0.2, 1/2), the ring's two keep 2/3
  // together, 2 / (2/3) = 3 against the 2 they had healthy: 1.5x.
  Fixture f;
  f.caps.ring_routes.edge_links = [](int, int from, int to) {
    std::vector<std::string> links{std::to_string(from) + "-" + std::to_string(to)};
    if ((from == 0 && to == 1) || (from == 2 && to == 3)) links.push_back("s");
    return links;
  };
  RingPricer pricer(Fixture::plan(), 0, f.caps.ring_routes, {{"s", LinkShare{1.0, 0.2}}});
  const RingsScore s = pricer.score({0, 1, 2, 3});
  CHECK(s.worst == doctest::Approx(1.5));
  CHECK(s.paced == doctest::Approx(3.0));
  // Link 1-2 at half its rate too: its one flow paces at 2, no slower than
  // the two on s healthy: the ring's pace is still s's 3.
  RingPricer both(Fixture::plan(), 0, f.caps.ring_routes,
                  {{"s", LinkShare{1.0, 0.2}}, {"1-2", 0.5}});
  CHECK(both.score({0, 1, 2, 3}).paced == doctest::Approx(3.0));
}

TEST_CASE("tree pricer: a slow NIC paces an interior node's four flows, a root's two") {
  // 8 hosts, one replica each, flat sync run as NCCL's trees (routes.tree).
  // An edge from a to b leaves through "out<a>" and arrives through
  // "in<b>". Over 8 nodes tree 0 is 0 <- 4 <- {2, 6}, 2 <- {1, 3},
  // 6 <- {5, 7}, and tree 1 its mirror (r -> 7 - r): every node but the
  // two roots (positions 0 and 7) is interior in one tree, with 3 tree-edge
  // flows out there and 1 in the other: 4 flows on its NIC each way; a
  // root has 1 + 1 = 2.
  Fixture f;
  f.caps.ring_routes.edge_links = [](int, int from, int to) {
    return std::vector<std::string>{"out" + std::to_string(from), "in" + std::to_string(to)};
  };
  f.caps.ring_routes.tree = [](int) { return true; };
  ParallelPlan p = Fixture::plan();
  p.dp = 8;
  const std::vector<int> identity{0, 1, 2, 3, 4, 5, 6, 7};
  // Host 3's NIC out at half rate: its 4 flows take as long as 8 at full
  // rate against the busiest healthy link's 4: 2x.
  RingPricer slow_nic(p, 0, f.caps.ring_routes, {{"out3", 0.5}});
  CHECK(slow_nic.shape() == std::string("tree"));
  CHECK(slow_nic.score(identity).worst == doctest::Approx(2.0));
  CHECK(slow_nic.score(identity).paced == doctest::Approx(8.0));
  // At the front of the order host 3 is tree 0's root: 2 flows / 0.5 = 4,
  // no slower than any interior node's 4 at full rate.
  CHECK(slow_nic.score({3, 1, 2, 0, 4, 5, 6, 7}).worst == doctest::Approx(1.0));
  const std::vector<int> found = slow_nic.search(identity, 32);
  CHECK((found.front() == 3 || found.back() == 3));
  CHECK(slow_nic.score(found).worst == doctest::Approx(1.0));
  // A tenant filling 90% of "in5": one flow would get max(0.1, 1/2) of it;
  // node 5's 4 flows get 4/5 together: 4 / 0.8 = 5 against 4, 1.25x.
  RingPricer loaded(p, 0, f.caps.ring_routes, {{"in5", LinkShare{1.0, 0.1}}});
  CHECK(loaded.score(identity).worst == doctest::Approx(1.25));
  // The same load under rings (one flow an edge): 1 / 0.5 = 2x.
  f.caps.ring_routes.tree = {};
  RingPricer ring(p, 0, f.caps.ring_routes, {{"in5", LinkShare{1.0, 0.1}}});
  CHECK(ring.shape() == std::string("ring"));
  CHECK(ring.score(identity).worst == doctest::Approx(2.0));
}
