// The shipped topology files load, have the sizes their generators give,
// and route as the construction says.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>

#include "topo_test_util.hpp"

namespace parashift::topo {
namespace {

std::string shipped(const std::string& name) {
  return std::string(PARASHIFT_SOURCE_DIR) + "/topologies/" + name;
}

TEST_CASE("h100-1k.dot: 128 DGX H100 on a non-blocking 2-tier rail fat-tree") {
  CHECK(std::filesystem::file_size(shipped("h100-1k.dot")) < 5u * 1024 * 1024);
  const Topology t = load_topology(shipped("h100-1k.dot"));
  // 128 nodes = 4 groups of 32 -> 32 rail leaves; 32 spines.
  // Nodes: 128 x 17 = 2176 + 32 + 32 = 2240.
  // Cables: 128 x 24 = 3072 + 32 x 32 = 1024 -> 4096 cables = 8192 links.
  CHECK(t.node_count() == 2240);
  CHECK(t.link_count() == 8192);
  CHECK(t.gpu_count() == 1024);
  CHECK(t.host_count() == 128);
  CHECK(t.gpus_per_host() == 8);
  CHECK(t.route(0, 7).size() == 2);     // same node
  CHECK(t.route(0, 8).size() == 4);     // same group, same rail
  CHECK(t.route(0, 1023).size() == 6);  // other group, other rail
  // Non-blocking: every link out of a leaf runs at 400 Gb/s.
  const auto path = t.route(0, 1023);
  CHECK(t.link(path[2]).bandwidth_Bps == doctest::Approx(50e9));
  // Same as the generator that made it.
  const Topology g = generate_topology("rail-fat-tree", {{"nodes", "128"}});
  CHECK(g.node_count() == t.node_count());
  CHECK(g.link_count() == t.link_count());
}

TEST_CASE("h100-16k.dot: 2048 DGX H100 on a 3-tier rail fat-tree") {
  CHECK(std::filesystem::file_size(shipped("h100-16k.dot")) < 5u * 1024 * 1024);
  const auto start = std::chrono::steady_clock::now();
  const Topology t = load_topology(shipped("h100-16k.dot"));
  const double load_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE("h100-16k.dot loaded in " << load_s << " s");
  // 2048 nodes in 64 groups of 32; 4 groups (32 leaves) per pod -> 16 pods,
  // 512 leaves, 16 x 32 = 512 spines, 32 x 32 = 1024 cores.
  // Nodes: 2048 x 17 = 34816 + 512 + 512 + 1024 = 36864.
  // Cables: 2048 x 24 = 49152 + 512 x 32 = 16384 + 512 x 32 = 16384
  // -> 81920 cables = 163840 links.
  CHECK(t.node_count() == 36864);
  CHECK(t.link_count() == 163840);
  CHECK(t.gpu_count() == 16384);
  CHECK(t.host_count() == 2048);
  CHECK(t.gpus_per_host() == 8);
  CHECK(t.route(0, 8).size() == 4);      // same group and rail
  CHECK(t.route(0, 256).size() == 6);    // node 32: next group, same pod, via a spine
  CHECK(t.route(0, 1024).size() == 8);   // node 128: pod 1, up to a core
  CHECK(t.route(0, 16383).size() == 8);  // last pod
  CHECK(t.route(16383, 0).size() == 8);
}

}  // namespace
}  // namespace parashift::topo
