// Generators: counts derived from the construction, rates, parameter errors.
#include <doctest/doctest.h>

#include "topo_test_util.hpp"
#include "topologies/generators.hpp"

namespace parashift::topo {
namespace {

using test::error_of;

int count_kind(const Topology& t, NodeKind kind) {
  int n = 0;
  for (int v = 0; v < t.node_count(); ++v) n += t.node(v).kind == kind ? 1 : 0;
  return n;
}

// Bandwidth of the link between two named vertices.
double rate_Bps(const Topology& t, const std::string& from, const std::string& to) {
  int src = -1;
  int dst = -1;
  for (int v = 0; v < t.node_count(); ++v) {
    if (t.node(v).name == from) src = v;
    if (t.node(v).name == to) dst = v;
  }
  REQUIRE(src >= 0);
  REQUIRE(dst >= 0);
  const LinkId e = t.find_link(src, dst);
  REQUIRE(e >= 0);
  return t.link(e).bandwidth_Bps;
}

TEST_CASE("generator_names lists every generator sorted by name") {
  CHECK(generator_names() ==
        std::vector<std::string>{"dgx-a100", "dgx-h100", "fat-tree", "rail-fat-tree", "torus"});
  for (const auto& g : generator_catalog()) {
    CHECK_FALSE(g.summary.empty());
    CHECK((g.build != nullptr));
  }
}

TEST_CASE("dgx-h100: 8 GPUs - one NVSwitch - 8 NICs") {
  const Topology t = generate_topology("dgx-h100", {});
  // 8 GPUs + 1 NVSwitch + 8 NICs = 17 nodes; 8 GPU-NVSwitch + 8 GPU-NIC
  // cables = 16 cables = 32 links.
  CHECK(t.node_count() == 17);
  CHECK(t.link_count() == 32);
  CHECK(t.gpu_count() == 8);
  CHECK(t.host_count() == 1);
  CHECK(t.gpus_per_host() == 8);
  CHECK(count_kind(t, NodeKind::NvSwitch) == 1);
  CHECK(count_kind(t, NodeKind::Nic) == 8);
  // NVLink 4: 450 GB/s per direction; NDR: 400 Gb/s = 50 GB/s.
  CHECK(rate_Bps(t, "g3", "s0") == doctest::Approx(450e9));
  CHECK(rate_Bps(t, "s0", "g3") == doctest::Approx(450e9));
  CHECK(rate_Bps(t, "g3", "n3") == doctest::Approx(50e9));
  for (int g = 0; g < 8; ++g) CHECK(t.host_of_gpu(g) == 0);
}

TEST_CASE("dgx-a100: NVLink 3 at 300 GB/s - HDR at 200 Gb/s - nic_gbps override") {
  const Topology t = generate_topology("dgx-a100", {});
  CHECK(t.node_count() == 17);
  CHECK(rate_Bps(t, "g0", "s0") == doctest::Approx(300e9));
  CHECK(rate_Bps(t, "g0", "n0") == doctest::Approx(25e9));  // 200 Gb/s
  const Topology fast = generate_topology("dgx-a100", {{"nic_gbps", "400"}});
  CHECK(rate_Bps(fast, "g0", "n0") == doctest::Approx(50e9));
}

TEST_CASE("rail-fat-tree - 2 tiers - 16 DGX H100") {
  const Topology t = generate_topology("rail-fat-tree", {{"nodes", "16"}});
  // 64-port leaves: 32 down, 32 up; a group is 32 nodes, so 16 nodes are
  // one group with 8 rail leaves; 32 spines (one per leaf uplink).
  // Nodes: 16 x (8 GPU + 1 NVSwitch + 8 NIC) = 272, + 8 leaves + 32 spines = 312.
  // Cables: 16 x (8 + 8 + 8 NIC-leaf) = 384, + 8 leaves x 32 spines = 256 -> 640
  // cables = 1280 links.
  CHECK(t.node_count() == 312);
  CHECK(t.link_count() == 1280);
  CHECK(t.gpu_count() == 128);
  CHECK(t.host_count() == 16);
  CHECK(t.gpus_per_host() == 8);
  CHECK(count_kind(t, NodeKind::Leaf) == 8);
  CHECK(count_kind(t, NodeKind::Spine) == 32);
  CHECK(count_kind(t, NodeKind::Core) == 0);
  CHECK(t.host_of_gpu(77) == 9);  // GPU 77 = node 9, rail 5
  // Rail-optimised: NIC k of every node goes to leaf k.
  CHECK(t.find_link(t.gpu_node(0), t.gpu_node(1)) == -1);  // GPUs meet only via NVSwitch
  CHECK(rate_Bps(t, "n77", "l5") == doctest::Approx(50e9));
  CHECK(rate_Bps(t, "n5", "l5") == doctest::Approx(50e9));
  // Non-blocking: uplinks at the NIC rate.
  CHECK(rate_Bps(t, "l5", "p31") == doctest::Approx(50e9));
}

TEST_CASE("rail-fat-tree oversubscription divides leaf uplinks only") {
  const Topology t = generate_topology(
      "rail-fat-tree", {{"nodes", "4"}, {"node", "dgx-a100"}, {"oversubscription", "2"}});
  // A100: NIC 200 Gb/s = 25 GB/s; uplinks 25 / 2 = 12.5 GB/s, both directions.
  CHECK(rate_Bps(t, "n0", "l0") == doctest::Approx(25e9));
  CHECK(rate_Bps(t, "l0", "p0") == doctest::Approx(12.5e9));
  CHECK(rate_Bps(t, "p0", "l0") == doctest::Approx(12.5e9));
  const Topology four = generate_topology(
      "rail-fat-tree",
      {{"nodes", "4"}, {"oversubscription", "4"}, {"nic_gbps", "800"}, {"tiers", "3"}});
  // 800 Gb/s = 100 GB/s; leaf uplinks 25 GB/s; spine-core stays 100 GB/s.
  CHECK(rate_Bps(four, "g0", "n0") == doctest::Approx(100e9));
  CHECK(rate_Bps(four, "l0", "p0") == doctest::Approx(25e9));
  CHECK(rate_Bps(four, "p0", "c0") == doctest::Approx(100e9));
}

TEST_CASE("rail-fat-tree - 3 tiers - 16-port switches - 64 DGX") {
  const Topology t =
      generate_topology("rail-fat-tree", {{"nodes", "64"}, {"tiers", "3"}, {"leaf_radix", "16"}});
  // 16 ports: 8 down, 8 up. Group = 8 nodes -> 8 groups, 64 rail leaves.
  // A pod is 8 leaves (one group), so 8 pods x 8 spines = 64 spines;
  // cores: 8 planes x 8 = 64, each using one port per pod (8 of 16).
  // Nodes: 64 x 17 = 1088 + 64 + 64 + 64 = 1280.
  // Cables: 64 x 24 = 1536, + 64 leaves x 8 = 512, + 64 spines x 8 = 512
  // -> 2560 cables = 5120 links.
  CHECK(t.node_count() == 1280);
  CHECK(t.link_count() == 5120);
  CHECK(count_kind(t, NodeKind::Leaf) == 64);
  CHECK(count_kind(t, NodeKind::Spine) == 64);
  CHECK(count_kind(t, NodeKind::Core) == 64);
  CHECK(t.gpu_count() == 512);
  CHECK(t.host_count() == 64);
}

TEST_CASE("fat-tree k=4") {
  const Topology t = generate_topology("fat-tree", {{"k", "4"}});
  // k^3/4 = 16 hosts of 1 GPU + 1 NIC; 4 pods x (2 edge + 2 aggregation);
  // (k/2)^2 = 4 cores. Nodes: 16 + 16 + 8 + 8 + 4 = 52.
  // Cables: 16 GPU-NIC + 16 NIC-edge + 4 pods x 2 x 2 edge-agg (16)
  // + 8 agg x 2 cores (16) = 64 cables = 128 links.
  CHECK(t.node_count() == 52);
  CHECK(t.link_count() == 128);
  CHECK(t.gpu_count() == 16);
  CHECK(t.host_count() == 16);
  CHECK(t.gpus_per_host() == 1);
  const Topology multi = generate_topology("fat-tree", {{"k", "4"}, {"gpus_per_host", "4"}});
  CHECK(multi.gpu_count() == 64);
  CHECK(multi.gpus_per_host() == 4);
  CHECK(multi.host_of_gpu(5) == 1);
}

TEST_CASE("torus: routers with wrap-around links") {
  const Topology t = generate_topology("torus", {{"dims", "4x4"}});
  // 16 routers + 16 GPUs; 16 GPU-router cables + 2 dims x 16 ring cables
  // = 48 cables = 96 links.
  CHECK(t.node_count() == 32);
  CHECK(t.link_count() == 96);
  CHECK(count_kind(t, NodeKind::Router) == 16);
  const Topology cube = generate_topology("torus", {{"dims", "4x4x4"}, {"gpus_per_router", "2"}});
  // 64 routers + 128 GPUs; 128 GPU cables + 3 x 64 ring cables = 320 -> 640 links.
  CHECK(cube.node_count() == 192);
  CHECK(cube.link_count() == 640);
  CHECK(cube.host_count() == 64);
  CHECK(cube.gpus_per_host() == 2);
  // A size-2 dimension has one cable per ring: 2x3 -> 3 x-rings of 1 cable,
  // 2 y-rings of 3 cables, + 6 GPU cables = 15 cables = 30 links.
  CHECK(generate_topology("torus", {{"dims", "2x3"}}).link_count() == 30);
  // Injection defaults to 2 x dims x link_gbps = 1600 Gb/s = 200 GB/s.
  CHECK(rate_Bps(t, "g0", "r0") == doctest::Approx(200e9));
  CHECK(rate_Bps(t, "r0", "r1") == doctest::Approx(50e9));
}

TEST_CASE("generator errors name generator and parameter and say what was expected") {
  CHECK(error_of([] { generate_topology("mesh", {}); }) ==
        "unknown topology generator 'mesh'; expected one of: dgx-a100, dgx-h100, fat-tree, "
        "rail-fat-tree, torus");
  CHECK(error_of([] { generate_topology("rail-fat-tree", {}); }) ==
        "generator 'rail-fat-tree': missing required parameter 'nodes' (number of DGX nodes, "
        ">= 1)");
  CHECK(error_of([] {
          generate_topology("rail-fat-tree", {{"nodes", "8"}, {"tier", "2"}});
        }) ==
        "generator 'rail-fat-tree': unknown parameter 'tier'; expected one of: nodes, node, tiers, "
        "oversubscription, nic_gbps, leaf_radix");
  CHECK(error_of([] {
          generate_topology("rail-fat-tree", {{"nodes", "8"}, {"tiers", "4"}});
        }) ==
        "generator 'rail-fat-tree': parameter 'tiers' = '4': expected an integer from 2 to 3");
  CHECK(error_of([] {
          generate_topology("rail-fat-tree", {{"nodes", "eight"}});
        }) ==
        "generator 'rail-fat-tree': parameter 'nodes' = 'eight': expected an integer from 1 to "
        "1048576");
  CHECK(error_of([] {
          generate_topology("rail-fat-tree", {{"nodes", "8"}, {"node", "dgx-b200"}});
        }) ==
        "generator 'rail-fat-tree': parameter 'node' = 'dgx-b200': expected one of: "
        "dgx-a100, dgx-h100");
  CHECK(error_of([] {
          generate_topology("rail-fat-tree", {{"nodes", "8"}, {"oversubscription", "0.5"}});
        }) ==
        "generator 'rail-fat-tree': parameter 'oversubscription' = '0.5': expected a "
        "number >= 1");
  CHECK(error_of([] {
          generate_topology("rail-fat-tree", {{"nodes", "257"}});
        }) ==
        "generator 'rail-fat-tree': parameter 'nodes' = '257': expected at most 256 nodes for a "
        "2-tier tree of 64-port switches (use tiers=3)");
  CHECK(error_of([] {
          generate_topology("rail-fat-tree", {{"nodes", "8"}, {"leaf_radix", "63"}});
        }) ==
        "generator 'rail-fat-tree': parameter 'leaf_radix' = '63': expected an even "
        "number of ports");
  CHECK(error_of([] {
          generate_topology("dgx-h100", {{"nic_gbps", "0"}});
        }) == "generator 'dgx-h100': parameter 'nic_gbps' = '0': expected a number > 0");
  CHECK(error_of([] {
          generate_topology("fat-tree", {{"k", "5"}});
        }) == "generator 'fat-tree': parameter 'k' = '5': expected an even number of switch ports");
  CHECK(error_of([] {
          generate_topology("torus", {{"dims", "4x0"}});
        }) ==
        "generator 'torus': parameter 'dims' = '4x0': expected sizes >= 1 written like '8x8' or "
        "'4x4x4' (2 to 3 of them)");
  CHECK(error_of([] {
          generate_topology("torus", {{"dims", "16"}});
        }).find("(2 to 3 of them)") != std::string::npos);
}

}  // namespace
}  // namespace parashift::topo
