// Jobs sharing one cluster on one kernel and flow network
// (sim/shared_cluster.hpp): alone they run as simulate_iteration does; on
// links they share they slow each other, within what halving those links
// can cost; on disjoint links they do not.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>

#include "core/scenario/shared_cluster.hpp"
#include "sim/shared_cluster.hpp"

using namespace parashift;

namespace {

const std::string kFile = std::string(PARASHIFT_SOURCE_DIR) + "/scenarios/shared.yaml";

// 16 DGX H100 nodes on a 2-tier rail fat tree of 16-port switches: two
// groups of 8 nodes, each rail's leaf with 8 nodes below and, at
// oversubscription 4, 2 uplinks to the spines.
std::string cluster(const std::string& jobs) {
  return "cluster:\n"
         "  device: h100-sxm-80gb\n"
         "  topology: {generator: rail-fat-tree, node: dgx-h100, nodes: 16, tiers: 2,\n"
         "             leaf_radix: 16, oversubscription: 4}\n"
         "run: {iterations: 3}\n"
         "jobs:\n" +
         jobs;
}

// Llama-2 7B, tp8 dp8 (one tensor-parallel group a node): every replica's
// gradient all-reduce crosses the nodes it is placed on.
std::string job(const std::string& name, const std::string& nodes) {
  return "  - name: " + name +
         "\n"
         "    model: llama2-7b\n"
         "    training: {global_batch: 64, seq_len: 4096}\n"
         "    plan: {tp: 8, dp: 8}\n"
         "    placement: {nodes: " +
         nodes + "}\n";
}

sim::SharedClusterResult run(const std::string& jobs) {
  return sim::run_shared_cluster(core::parse_shared_cluster(cluster(jobs), kFile));
}

}  // namespace

TEST_CASE("one job on a shared cluster runs every iteration as it runs alone") {
  // The shared kernel starts iteration k at the end of k-1; its times are
  // counted from there, so each equals the iteration alone to the ns.
  const auto r = run(job("a", "[0, 8, 1, 9, 2, 10, 3, 11]"));
  REQUIRE(r.jobs[0].iteration_ns.size() == 3);
  for (sim::TimeNs t : r.jobs[0].iteration_ns) CHECK(t == r.jobs[0].alone_ns);
  CHECK(r.end_ns == 3 * r.jobs[0].alone_ns);
  CHECK(r.shared_links.empty());
}

TEST_CASE("two jobs whose rings cross the same leaf uplinks slow each other, at most 2x") {
  // Each job alternates nodes of the two groups, so every ring step of
  // every rail crosses the spines, and the two jobs' rails meet on the
  // leaves' two uplinks. Identical and placed alike, they see the same
  // iteration. Sharing can at most halve a link's rate for each, so an
  // iteration at most doubles; the sync is exposed, so it does slow.
  const auto r =
      run(job("a", "[0, 8, 1, 9, 2, 10, 3, 11]") + job("b", "[4, 12, 5, 13, 6, 14, 7, 15]"));
  CHECK_FALSE(r.shared_links.empty());
  for (const auto& j : r.jobs) {
    CHECK(j.alone_ns == r.jobs[0].alone_ns);
    CHECK(j.mean_iteration_ns() > j.alone_ns);
    CHECK(j.mean_iteration_ns() <= 2 * j.alone_ns);
  }
  CHECK(r.jobs[0].iteration_ns == r.jobs[1].iteration_ns);
  // Deterministic: the same cluster, the same times.
  CHECK(run(job("a", "[0, 8, 1, 9, 2, 10, 3, 11]") + job("b", "[4, 12, 5, 13, 6, 14, 7, 15]"))
            .jobs[1]
            .iteration_ns == r.jobs[1].iteration_ns);
}

TEST_CASE("two jobs each inside one leaf group share no link and keep their pace") {
  // Nodes 0..7 and 8..15: every ring step stays under its rail's leaf,
  // whose links to each NIC are the NIC's own.
  const auto r = run(job("a", "[\"0-7\"]") + job("b", "[\"8-15\"]"));
  CHECK(r.shared_links.empty());
  for (const auto& j : r.jobs)
    for (sim::TimeNs t : j.iteration_ns) CHECK(t == j.alone_ns);
}

TEST_CASE("a tenant on a job's links slows it, less when its classes weigh more") {
  // The links jobs a and b share above are links a's rings cross. A tenant
  // sending flat out on them takes half of each at equal weights while a's
  // buckets want them, 1/33 with grad_sync and pipeline at 32.
  const std::string a = job("a", "[0, 8, 1, 9, 2, 10, 3, 11]");
  const core::SharedCluster both =
      core::parse_shared_cluster(cluster(a + job("b", "[4, 12, 5, 13, 6, 14, 7, 15]")), kFile);
  const auto shared = sim::run_shared_cluster(both).shared_links;
  REQUIRE_FALSE(shared.empty());
  std::string links;
  for (int id : shared)
    links += (links.empty() ? "\"" : ", \"") + both.jobs[0].scenario.topology.link(id).name + "\"";
  const std::string tenant = "tenants:\n  - {links: [" + links + "]}\n";
  const auto plain =
      sim::run_shared_cluster(core::parse_shared_cluster(cluster(a) + tenant, kFile));
  const auto weighted = sim::run_shared_cluster(core::parse_shared_cluster(
      "traffic: {grad_sync: 32, pipeline: 32}\n" + cluster(a) + tenant, kFile));
  const sim::SharedJobResult& p = plain.jobs[0];
  CHECK(p.mean_iteration_ns() > p.alone_ns);
  CHECK(plain.tenant_bytes[0] > 0);
  const sim::SharedJobResult& w = weighted.jobs[0];
  CHECK(w.mean_iteration_ns() >= w.alone_ns);
  CHECK(w.mean_iteration_ns() < p.mean_iteration_ns());
  // A tenant that starts after the last job ended sends nothing and changes nothing.
  const auto late = sim::run_shared_cluster(core::parse_shared_cluster(
      cluster(a) + "tenants:\n  - {links: [" + links + "], at: 1h}\n", kFile));
  CHECK(late.tenant_bytes[0] == 0);
  CHECK(late.jobs[0].iteration_ns[2] == late.jobs[0].alone_ns);
}

TEST_CASE("a job's policy sees the other job only as slower steps, and compresses its sync") {
  // a and b cross the same leaf uplinks (above). With calibrate and sync on,
  // a's measured steps come out slower than its preset predicts, so its
  // calibrated network is slower, and the sync module re-prices the modes
  // on it: PowerSGD's fewer bytes win. a then sends less on the shared
  // links, so b, whose plan does not change, gets faster too.
  const std::string b = job("b", "[4, 12, 5, 13, 6, 14, 7, 15]");
  const std::string a = job("a", "[0, 8, 1, 9, 2, 10, 3, 11]");
  const std::string policy = "    policy: {calibrate: {enabled: true}, sync: {enabled: true}}\n";
  const std::string thirty = "    iterations: 30\n";
  const auto off = run(a + thirty + b + thirty);
  const auto on = run(a + policy + thirty + b + thirty);
  REQUIRE_FALSE(on.jobs[0].directives.empty());
  CHECK(on.jobs[0].final_plan.compression.enabled());
  CHECK(on.jobs[1].directives.empty());
  CHECK(on.jobs[0].mean_iteration_ns() < off.jobs[0].mean_iteration_ns());
  CHECK(on.jobs[1].mean_iteration_ns() < off.jobs[1].mean_iteration_ns());
  // Alone, a's policy compresses too (the 4:1 uplinks are slower than its
  // preset), but b's traffic made a's measured network slower still: the
  // module prices a's uncompressed sync slower beside b, so the same change
  // is predicted to gain more there.
  const auto alone = run(a + policy + thirty);
  REQUIRE(alone.jobs[0].final_plan.compression.enabled());
  REQUIRE(alone.jobs[0].directives.size() == 1);
  CHECK(on.jobs[0].directives.front().directive.predicted_gain_s >
        alone.jobs[0].directives.front().directive.predicted_gain_s);
  CHECK(on.jobs[0].alone_ns == alone.jobs[0].alone_ns);
  // Without the policy a's plan is as written.
  CHECK(off.jobs[0].directives.empty());
  CHECK_FALSE(off.jobs[0].final_plan.compression.enabled());
}

TEST_CASE("a job's link telemetry counts the other job's bytes as foreign, its own as its own") {
  // a and b cross the same leaf uplinks (above). Each job's report lists
  // every link that carried bytes in its iteration: a's own bytes there are
  // what a sends alone (the same flows, counted from its iteration's start
  // to its end), and the rest is b's, foreign to a.
  const std::string a = job("a", "[0, 8, 1, 9, 2, 10, 3, 11]");
  const auto alone = run(a);
  const auto both = run(a + job("b", "[4, 12, 5, 13, 6, 14, 7, 15]"));
  std::map<int, const sim::LinkUse*> seen;
  for (const sim::LinkUse& use : both.jobs[0].last.links) seen[use.link] = &use;
  // Alone, nothing on a's links is foreign.
  REQUIRE_FALSE(alone.jobs[0].last.links.empty());
  for (const sim::LinkUse& use : alone.jobs[0].last.links) {
    CHECK(use.foreign_bytes == 0);
    REQUIRE(seen.count(use.link) == 1);
    const sim::LinkUse& shared = *seen[use.link];
    CHECK(shared.bytes - shared.foreign_bytes == doctest::Approx(use.bytes).epsilon(1e-9));
  }
  // On the links both use, b's bytes are foreign to a; on b's own links
  // (every link b's first iteration used alone that a's did not), all are.
  int foreign_on_shared = 0, b_only = 0;
  for (int id : both.shared_links) foreign_on_shared += seen.at(id)->foreign_bytes > 0;
  CHECK(foreign_on_shared == static_cast<int>(both.shared_links.size()));
  for (const sim::LinkUse& use : both.jobs[1].last.links) {
    const bool a_uses =
        std::any_of(alone.jobs[0].last.links.begin(), alone.jobs[0].last.links.end(),
                    [&](const sim::LinkUse& u) { return u.link == use.link; });
    if (a_uses || use.foreign_bytes > 0) continue;
    ++b_only;
    REQUIRE(seen.count(use.link) == 1);
    CHECK(seen[use.link]->foreign_bytes == doctest::Approx(seen[use.link]->bytes));
  }
  CHECK(b_only > 0);
}

TEST_CASE("a job's aggregation policy moves its rings off the links the other job loads") {
  // Two Llama-3 8B jobs, tp4 dp16 with hierarchical sync (one ring per rail
  // between nodes), each on 4 nodes of either leaf group of 16 DGX H100
  // nodes at 50 Gb/s a rail, so both jobs' rings cross the spines, ECMP
  // picking one per flow. Static, each job's slowest ring shares spine
  // links with the other's. With aggregation on, a reads b's bytes on those
  // links as foreign load, re-orders its ring so that no edge crosses them,
  // and both jobs get faster (b's rings then have those links to
  // themselves). The congested set a sees does not change after the move,
  // and the module acts only on a change, so it moves once.
  auto two = [](const std::string& a_policy) {
    const std::string plan =
        "    model: llama3-8b\n"
        "    training: {global_batch: 128, seq_len: 4096}\n"
        "    plan: {tp: 4, dp: 16, sync: hierarchical, recompute: selective, "
        "sequence_parallel: true}\n";
    return sim::run_shared_cluster(core::parse_shared_cluster(
        "cluster:\n"
        "  device: h100-sxm-80gb\n"
        "  topology: {generator: rail-fat-tree, node: dgx-h100, nodes: 16, tiers: 2, "
        "leaf_radix: 16}\n"
        "  truth: {inter_node_bandwidth: 0.125}\n"
        "run: {iterations: 8}\n"
        "jobs:\n"
        "  - name: a\n" +
            plan + "    placement: {nodes: [\"0-3\", \"8-11\"]}\n" + a_policy + "  - name: b\n" +
            plan + "    placement: {nodes: [\"4-7\", \"12-15\"]}\n",
        kFile));
  };
  const auto off = two("");
  const auto on = two("    policy: {aggregation: {enabled: true}}\n");
  for (const auto& j : off.jobs) CHECK(j.mean_iteration_ns() > j.alone_ns);
  REQUIRE(on.jobs[0].directives.size() == 1);
  CHECK(core::kind_name(on.jobs[0].directives[0].directive.action) == std::string("reorder"));
  CHECK(on.jobs[1].directives.empty());
  CHECK(on.jobs[0].mean_iteration_ns() < off.jobs[0].mean_iteration_ns());
  CHECK(on.jobs[1].mean_iteration_ns() < off.jobs[1].mean_iteration_ns());
  // After the move a runs within 5% of its pace alone: iteration 0 ran
  // before it, and iteration 1 carries the new communicator's build
  // (core::kRingRebuildNs, 1 s), so from iteration 2.
  for (std::size_t i = 2; i < on.jobs[0].iteration_ns.size(); ++i)
    CHECK(static_cast<double>(on.jobs[0].iteration_ns[i]) <
          1.05 * static_cast<double>(on.jobs[0].alone_ns));
}
