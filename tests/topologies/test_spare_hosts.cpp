// with_spare_hosts: a spare host is cabled like its template host, and the
// topology it was added to routes as before.
#include <doctest/doctest.h>

#include "topo_test_util.hpp"
#include "topologies/spare_hosts.hpp"

namespace parashift::topo {
namespace {

using test::hops;
using Names = std::vector<std::string>;

TEST_CASE("a spare host copies its template host's GPUs, NICs and cables") {
  // 2 DGX H100 nodes on a rail fat-tree: 16 GPUs, 2 hosts of 8.
  const Topology t = generate_topology("rail-fat-tree", {{"nodes", "2"}});
  const Topology s = with_spare_hosts(t, {0});
  CHECK(s.gpu_count() == 24);
  CHECK(s.host_count() == 3);
  CHECK(s.gpus_per_host() == 8);
  for (int g = 16; g < 24; ++g) CHECK(s.host_of_gpu(g) == 2);
  // Host 0's links are those with an end on host 0 (GPU-NVSwitch,
  // GPU-NIC, NIC-leaf, both directions): the copy adds as many, and the
  // existing links keep their ids.
  int on_host_0 = 0;
  for (const LinkInfo& l : t.links())
    on_host_0 += (t.node(l.src).host == 0 || t.node(l.dst).host == 0) ? 1 : 0;
  REQUIRE(on_host_0 > 0);
  CHECK(s.link_count() == t.link_count() + on_host_0);
  for (LinkId e = 0; e < t.link_count(); ++e) CHECK(s.link(e).name == t.link(e).name);
  // Spare GPU 17 is local GPU 1, on rail 1 as GPU 1 is: over its own NIC
  // (the copy of n1) to leaf l1, then to GPU 9 of node 1 on the same rail.
  CHECK(hops(s, s.route(17, 9)) == Names{"spare0/n1", "l1", "n9", "g9"});
  // Inside the spare host, over its own NVSwitch copy.
  CHECK(hops(s, s.route(16, 23)).back() == "spare0/g7");
  CHECK(s.route(16, 23).size() == t.route(0, 7).size());
}

TEST_CASE("spare hosts leave the routes between the existing GPUs as they were") {
  const Topology t = generate_topology("rail-fat-tree", {{"nodes", "4"}});
  const Topology s = with_spare_hosts(t, {0, 2});
  CHECK(s.host_count() == 6);
  for (int a = 0; a < t.gpu_count(); ++a)
    for (int b = 0; b < t.gpu_count(); ++b) CHECK(s.route(a, b) == t.route(a, b));
}

TEST_CASE("a spare host's template must exist") {
  const Topology t = generate_topology("dgx-h100", {});
  CHECK(test::error_of([&] { with_spare_hosts(t, {1}); }) ==
        "spare host 0: template host 1; expected 0..0");
}

}  // namespace
}  // namespace parashift::topo
