// The cluster-level stagger module (sim/stagger.hpp): the overlap of two
// jobs' busy periods repeated at their periods, the offsets it picks, and
// two identical jobs whose rings cross the same uplinks, staggered.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/scenario/shared_cluster.hpp"
#include "sim/shared_cluster.hpp"
#include "sim/stagger.hpp"

using namespace parashift;

namespace {

sim::BusyProfile profile(sim::TimeNs period, std::vector<sim::BusyPeriod> busy) {
  return sim::BusyProfile{period, std::move(busy)};
}

}  // namespace

TEST_CASE("overlap of two jobs' busy periods: on shared links only, repeated at each period") {
  // a: period 10, link 1 busy [0, 4). b: period 10, link 1 busy [0, 4) and
  // link 2 (not a's) busy all the time. Over 20: a [0,4) [10,14).
  const auto a = profile(10, {{1, 0, 4}});
  const auto b = profile(10, {{1, 0, 4}, {2, 0, 10}});
  // Both at 0: 2 x 4 on link 1; link 2 is not shared.
  CHECK(sim::overlap_ns(a, 0, b, 0, 20) == 8);
  // b at 2: [2,6) [12,16) meet a's on [2,4) and [12,14).
  CHECK(sim::overlap_ns(a, 0, b, 2, 20) == 4);
  // b at 5: [5,9) [15,19) miss a's.
  CHECK(sim::overlap_ns(a, 0, b, 5, 20) == 0);
  // Unequal periods: c period 15 busy [0, 5): [0,5) [15,20) over 30 meet
  // a's [0,4) [10,14) [20,24) on [0,4) only.
  const auto c = profile(15, {{1, 0, 5}});
  CHECK(sim::overlap_ns(a, 0, c, 0, 30) == 4);
  CHECK(sim::overlap_ns(c, 0, a, 0, 30) == 4);
}

TEST_CASE("stagger starts the second job where its busy periods miss the first's") {
  // Two jobs of period 10,000 ns, link 1 busy [0, 4,000), 3 iterations
  // each: horizon 30,000. Offsets are k x 10,000 / 16 = 625 k; the first
  // that keeps b's [s, s + 4,000) clear of a's [0, 4,000) and of its next
  // period [10,000, ...) is k = 7, s = 4,375. All at 0 they overlap 3 x
  // 4,000 = 12,000.
  const auto a = profile(10'000, {{1, 0, 4'000}});
  const sim::StaggerPlan plan = sim::plan_stagger({a, a}, {3, 3});
  CHECK(plan.start_ns == std::vector<sim::TimeNs>{0, 4'375});
  CHECK(plan.overlap_ns == 0);
  CHECK(plan.unstaggered_overlap_ns == 12'000);
  CHECK(plan.horizon_ns == 30'000);
}

TEST_CASE("two identical jobs crossing the same uplinks, staggered, each keep their pace alone") {
  // Llama-2 7B tp8 dp8 on nodes of both leaf groups of 16 DGX H100 under
  // 4:1 oversubscribed leaves (tests/sim/shared_cluster_test.cpp: together
  // they slow each other). Staggered, b starts where its gradient sync
  // meets a's compute: their busy periods alone do not overlap on any link,
  // so no flow ever shares a link with the other job's, and every
  // iteration takes exactly its time alone.
  auto job = [](const std::string& name, const std::string& nodes) {
    return "  - name: " + name +
           "\n    model: llama2-7b\n    training: {global_batch: 64, seq_len: 4096}\n"
           "    plan: {tp: 8, dp: 8}\n    placement: {nodes: " +
           nodes + "}\n";
  };
  const std::string text =
      "cluster:\n  device: h100-sxm-80gb\n"
      "  topology: {generator: rail-fat-tree, node: dgx-h100, nodes: 16, tiers: 2,\n"
      "             leaf_radix: 16, oversubscription: 4}\n"
      "run: {iterations: 3}\n"
      "stagger: true\n"
      "jobs:\n" +
      job("a", "[0, 8, 1, 9, 2, 10, 3, 11]") + job("b", "[4, 12, 5, 13, 6, 14, 7, 15]");
  const auto r = sim::run_shared_cluster(
      core::parse_shared_cluster(text, std::string(PARASHIFT_SOURCE_DIR) + "/scenarios/x.yaml"));
  REQUIRE(r.stagger);
  CHECK(r.stagger->unstaggered_overlap_ns > 0);
  CHECK(r.stagger->overlap_ns == 0);
  CHECK(r.jobs[0].start_ns == 0);
  CHECK(r.jobs[1].start_ns > 0);
  CHECK(r.jobs[1].start_ns < r.jobs[1].alone_ns);
  for (const auto& j : r.jobs)
    for (sim::TimeNs t : j.iteration_ns) CHECK(t == j.alone_ns);
  CHECK(r.jobs[1].end_ns == r.jobs[1].start_ns + 3 * r.jobs[1].alone_ns);
}
