#include <doctest/doctest.h>

#include "core/cost/estimate.hpp"
#include "core/scenario/cluster_view.hpp"
#include "sim/collective.hpp"
#include "sim/kernel.hpp"
#include "sim/network/flow_network.hpp"
#include "sim/network/nccl_coflow.hpp"
#include "test_topologies.hpp"
#include "topologies/topology.hpp"

using namespace parashift;
using core::CollectiveKind;
using sim::TimeNs;

TEST_CASE("ring collectives on a star: steps x (chunk / bandwidth + path latency)") {
  // 4 GPUs, 100 GB/s cables, 1 us per link: every neighbour pair is 2 links,
  // 100 GB/s bottleneck, 2 us latency.
  const auto t = test::star(4, 100e9, 1'000);
  const sim::PathModel paths(t);
  const std::vector<int> ring{0, 1, 2, 3};
  // 1 GB all-reduce: chunk 250 MB -> 2.5 ms + 2 us per step, 2(n-1) = 6 steps.
  CHECK(sim::ring_wire_ns(paths, CollectiveKind::AllReduce, 1e9, ring) == 6 * 2'502'000);
  // Reduce-scatter and all-gather: n-1 = 3 steps.
  CHECK(sim::ring_wire_ns(paths, CollectiveKind::ReduceScatter, 1e9, ring) == 3 * 2'502'000);
  CHECK(sim::ring_wire_ns(paths, CollectiveKind::AllGather, 1e9, ring) == 3 * 2'502'000);
  // Send/recv: every rank passes the whole 1 GB to its neighbour at once: 10 ms + 2 us.
  CHECK(sim::ring_wire_ns(paths, CollectiveKind::SendRecv, 1e9, ring) == 10'002'000);
  // A group of one moves nothing.
  CHECK(sim::ring_wire_ns(paths, CollectiveKind::AllReduce, 1e9, {2}) == 0);
}

TEST_CASE("the slowest ring neighbour sets every step") {
  auto t = test::star(4, 100e9, 1'000);
  // Halve GPU 2's uplink (link ids: gpu g's cable is links 2g (up) and 2g+1 (down)).
  const auto up = t.find_link(t.gpu_node(2), 0);
  REQUIRE(up >= 0);
  t.set_link_bandwidth(up, 50e9);
  const sim::PathModel paths(t);
  // 1 GB all-gather: chunk 250 MB; step 2 -> 3 crosses 50 GB/s: 5 ms + 2 us, 3 steps.
  CHECK(sim::ring_wire_ns(paths, CollectiveKind::AllGather, 1e9, {0, 1, 2, 3}) == 3 * 5'002'000);
}

TEST_CASE("nccl-tests bus bandwidth factors") {
  CHECK(sim::bus_factor(CollectiveKind::AllReduce, 8) == doctest::Approx(2.0 * 7 / 8));
  CHECK(sim::bus_factor(CollectiveKind::ReduceScatter, 8) == doctest::Approx(7.0 / 8));
  CHECK(sim::bus_factor(CollectiveKind::AllGather, 4) == doctest::Approx(0.75));
}

TEST_CASE("one collective: simulator path model, ring coflow and cost model agree") {
  // Two DGX H100 nodes on a rail-optimised fat-tree: the path model reads the
  // group's links off its routes, the cost model off the two-level view, and
  // both price them with core::nccl_collective; the max-min ring coflow alone
  // on the network takes the same time (to rounding).
  const topo::Topology t = topo::generate_topology("rail-fat-tree", {{"nodes", "2"}});
  const core::DeviceSpec& device = core::device_preset("h100-sxm-80gb");
  const core::ClusterView view = core::cluster_view_of(t, device);
  const sim::PathModel paths(t);
  struct Group {
    std::vector<int> gpus;
    int ranks_per_node;
  };
  std::vector<int> node0(8), both(16);
  for (int i = 0; i < 8; ++i) node0[static_cast<std::size_t>(i)] = i;
  for (int i = 0; i < 16; ++i) both[static_cast<std::size_t>(i)] = i;
  const std::vector<Group> groups = {{node0, 8}, {both, 8}, {{0, 8}, 1}};
  for (const Group& g : groups) {
    for (const auto kind : {CollectiveKind::AllReduce, CollectiveKind::AllGather}) {
      for (const double bytes : {8.0, 4.0e6, 1.0e9}) {
        CAPTURE(g.gpus.size());
        CAPTURE(bytes);
        const TimeNs analytical = core::collective_ns(kind, bytes, static_cast<int>(g.gpus.size()),
                                                      g.ranks_per_node, view);
        CHECK(sim::ring_collective_ns(paths, view.nccl, kind, bytes, g.gpus) == analytical);
        sim::Kernel k;
        sim::FlowNetwork net(k, t);
        TimeNs done = -1;
        sim::start_collective_coflow(net, view.nccl, kind, bytes, g.gpus, 0,
                                     [&](TimeNs t_ns) { done = t_ns; });
        k.run();
        CHECK(done == doctest::Approx(static_cast<double>(analytical)).epsilon(1e-6));
      }
    }
  }
}
