// route(): hop counts by construction, BFS cross-checks, ECMP, determinism.
#include <doctest/doctest.h>

#include <set>
#include <thread>

#include "topo_test_util.hpp"

namespace parashift::topo {
namespace {

using test::bfs_hops;
using test::hops;
using test::is_path;

using Names = std::vector<std::string>;

TEST_CASE("route inside a DGX: GPU -> NVSwitch -> GPU") {
  const Topology t = generate_topology("dgx-h100", {});
  CHECK(t.route(3, 3).empty());
  const auto path = t.route(0, 5);
  CHECK(hops(t, path) == Names{"s0", "g5"});
  // 2 NVLink hops of 350 ns = 0.7 us, at 450 GB/s.
  CHECK(t.link(path[0]).latency_ns + t.link(path[1]).latency_ns == 700);
  CHECK(t.link(path[0]).bandwidth_Bps == doctest::Approx(450e9));
}

TEST_CASE("a link down: routes avoid it, and a GPU it cut off is unreachable") {
  Topology t = generate_topology("rail-fat-tree", {{"nodes", "2"}});
  const auto link_named = [&](const std::string& name) {
    for (LinkId e = 0; e < t.link_count(); ++e)
      if (t.link(e).name == name) return e;
    FAIL("no link " << name);
    return LinkId{-1};
  };
  const auto spine_hops_via_p0 = [&] {
    int found = 0;
    for (std::uint64_t h = 0; h < 512; ++h)
      for (const LinkId e : t.route(1, 10, h)) found += t.link(e).name == "l1->p0" ? 1 : 0;
    return found;
  };
  // Rail 1 of node 0 to rail 2 of node 1 climbs from leaf l1 to one of the
  // spines by hash: over 512 hashes some take p0. With l1->p0 down none
  // does, and every route is still 6 links long.
  CHECK(spine_hops_via_p0() > 0);
  t.set_link_down(link_named("l1->p0"));
  CHECK(spine_hops_via_p0() == 0);
  for (std::uint64_t h = 0; h < 64; ++h) CHECK(t.route(1, 10, h).size() == 6);
  // GPU 1's NIC cable down both ways: it reaches node 0's GPUs over the
  // NVSwitch, and no GPU of node 1.
  t.set_link_down(link_named("n1->l1"));
  t.set_link_down(link_named("l1->n1"));
  CHECK(hops(t, t.route(1, 5)) == Names{"s0", "g5"});
  CHECK(test::error_of([&] { t.route(1, 9); }).find("cannot reach") != std::string::npos);
}

TEST_CASE("route across a 2-tier rail fat-tree") {
  const Topology t = generate_topology("rail-fat-tree", {{"nodes", "16"}});
  SUBCASE("same node: 2 links over NVSwitch") {
    CHECK(hops(t, t.route(8, 15)) == Names{"s1", "g15"});
  }
  SUBCASE("other node, same rail: GPU -> NIC -> leaf -> NIC -> GPU = 4 links") {
    // GPU 1 is node 0 rail 1; GPU 9 is node 1 rail 1: both on leaf l1.
    CHECK(hops(t, t.route(1, 9)) == Names{"n1", "l1", "n9", "g9"});
  }
  SUBCASE("other node, other rail: up to a spine = 6 links, 3.2 us") {
    const auto path = t.route(1, 10);  // rail 1 -> rail 2
    REQUIRE(path.size() == 6);
    const Names names = hops(t, path);
    CHECK(names[0] == "n1");
    CHECK(names[1] == "l1");
    CHECK(t.node(t.link(path[2]).dst).kind == NodeKind::Spine);
    CHECK(names[3] == "l2");
    CHECK(names[4] == "n10");
    CHECK(names[5] == "g10");
    std::int64_t latency_ns = 0;
    for (const LinkId e : path) latency_ns += t.link(e).latency_ns;
    CHECK(latency_ns == 2 * 1000 + 4 * 300);
  }
}

TEST_CASE("route across a 3-tier rail fat-tree goes up to a core between pods") {
  const Topology t =
      generate_topology("rail-fat-tree", {{"nodes", "64"}, {"tiers", "3"}, {"leaf_radix", "16"}});
  // Groups of 8 nodes, one group per pod. GPU 0: node 0 (pod 0);
  // GPU 64: node 8 (pod 1), same rail 0.
  const auto path = t.route(0, 64);
  const std::vector<NodeKind> expected{NodeKind::Nic,  NodeKind::Leaf,  NodeKind::Spine,
                                       NodeKind::Core, NodeKind::Spine, NodeKind::Leaf,
                                       NodeKind::Nic,  NodeKind::Gpu};
  REQUIRE(path.size() == expected.size());
  for (std::size_t i = 0; i < path.size(); ++i) {
    CHECK(t.node(t.link(path[i]).dst).kind == expected[i]);
  }
  CHECK(t.route(0, 8).size() == 4);  // same group, same rail
  CHECK(t.route(0, 9).size() == 6);  // same group (pod), other rail: via a pod spine
}

TEST_CASE("ECMP spreads flows over spines - the same hash gives the same route") {
  const Topology t = generate_topology("rail-fat-tree", {{"nodes", "16"}});
  std::set<std::string> spines;
  for (std::uint64_t flow = 0; flow < 64; ++flow) {
    const auto path = t.route(1, 10, flow);
    REQUIRE(path.size() == 6);
    spines.insert(t.node(t.link(path[2]).dst).name);
    CHECK(t.route(1, 10, flow) == path);
  }
  // 64 hashes over 32 spines: about 32 x (1 - (31/32)^64) = 27.8 distinct.
  CHECK(spines.size() >= 20);
  // Different GPU pairs with the default hash spread too.
  std::set<std::string> pair_spines;
  for (int b = 10; b < 128; b += 8) {
    pair_spines.insert(t.node(t.link(t.route(1, b)[2]).dst).name);
  }
  CHECK(pair_spines.size() >= 5);  // 15 pairs over 32 spines
}

TEST_CASE("routes are shortest paths: every pair against BFS") {
  const std::vector<std::pair<std::string, std::map<std::string, std::string>>> cases{
      {"fat-tree", {{"k", "4"}, {"gpus_per_host", "2"}}},
      {"rail-fat-tree", {{"nodes", "6"}, {"tiers", "3"}, {"leaf_radix", "16"}}},
      {"torus", {{"dims", "3x4x2"}}},
      {"dgx-a100", {}},
  };
  for (const auto& [generator, params] : cases) {
    CAPTURE(generator);
    const Topology t = generate_topology(generator, params);
    for (int a = 0; a < t.gpu_count(); ++a) {
      for (int b = 0; b < t.gpu_count(); ++b) {
        const auto path = t.route(a, b, static_cast<std::uint64_t>(a * 31 + b));
        if (!is_path(t, path, a, b) || static_cast<int>(path.size()) != bfs_hops(t, a, b)) {
          FAIL_CHECK("bad route " << a << " -> " << b);
        }
      }
    }
  }
}

TEST_CASE("fat-tree and torus hop counts by construction") {
  const Topology fat = generate_topology("fat-tree", {{"k", "4"}});
  CHECK(fat.route(0, 1).size() == 4);  // same edge switch
  CHECK(fat.route(0, 2).size() == 6);  // same pod, via aggregation
  CHECK(fat.route(0, 4).size() == 8);  // other pod, via core
  const Topology shared = generate_topology("fat-tree", {{"k", "4"}, {"gpus_per_host", "2"}});
  CHECK(hops(shared, shared.route(0, 1)) == Names{"n0", "g1"});  // through the shared NIC
  const Topology torus = generate_topology("torus", {{"dims", "4x4"}});
  CHECK(torus.route(0, 1).size() == 3);   // GPU, 1 router hop, GPU
  CHECK(torus.route(0, 10).size() == 6);  // (0,0) -> (2,2): 4 router hops
  CHECK(torus.route(0, 3).size() == 3);   // (0,0) -> (3,0) over the wrap-around
}

TEST_CASE("route is safe from several threads and survives copies") {
  const Topology t = generate_topology("rail-fat-tree", {{"nodes", "16"}});
  const Topology copy = t;  // NOLINT: exercising the copy
  std::vector<std::vector<std::size_t>> first(2);
  std::vector<std::thread> threads;
  for (int k = 0; k < 2; ++k) {
    threads.emplace_back([&, k] {
      for (int b = 0; b < t.gpu_count(); ++b) first[k].push_back(t.route(k, b, 7).size());
    });
  }
  for (auto& th : threads) th.join();
  for (int b = 0; b < t.gpu_count(); ++b) {
    CHECK(first[0][b] == copy.route(0, b, 7).size());
    CHECK(first[1][b] == t.route(1, b, 7).size());
  }
  CHECK(copy.route(1, 10, 3) == t.route(1, 10, 3));
  CHECK_THROWS_AS(t.route(0, 128), std::out_of_range);
}

TEST_CASE("a hand-built topology: builders - find_link - set_link_bandwidth") {
  Topology t;
  const int a = t.add_node({"a", NodeKind::Gpu});
  const int b = t.add_node({"b", NodeKind::Gpu});
  const int sw = t.add_node({"sw", NodeKind::Leaf});
  const auto [up, down] = t.add_cable(a, sw, 1e9, 100);
  t.add_cable(b, sw, 1e9, 100);
  t.validate();
  CHECK(t.node(a).gpu_index == 0);
  CHECK(t.node(b).gpu_index == 1);
  CHECK(t.host_count() == 2);  // no NVSwitch and no direct link: one host per GPU
  CHECK(t.find_link(a, sw) == up);
  CHECK(t.find_link(sw, a) == down);
  CHECK(t.link(up).name == "a->sw");
  t.set_link_bandwidth(up, 2e9);
  CHECK(t.link(up).bandwidth_Bps == 2e9);
  CHECK(t.route(0, 1).size() == 2);
  CHECK(test::error_of([&] { t.add_cable(a, b, 0, 1); }) ==
        "link 'a->b': bandwidth 0 B/s; expected a finite value > 0");
  CHECK(test::error_of([&] {
          t.add_node({"c", NodeKind::Gpu, 1});
        }) == "GPU 'c': gpu index 1 is already used by 'b'; expected each GPU index once");
}

}  // namespace
}  // namespace parashift::topo
