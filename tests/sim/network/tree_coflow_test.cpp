// NCCL's tree all-reduce between nodes on the flow network
// (sim/network/tree_coflow.hpp) and the edges it runs on
// (core::nccl_tree_flows).
#include <doctest/doctest.h>

#include <algorithm>

#include "core/cost/nccl_tree.hpp"
#include "core/device_spec.hpp"
#include "core/scenario/cluster_view.hpp"
#include "sim/collective.hpp"
#include "sim/network/nccl_coflow.hpp"
#include "sim/network/ring_coflow.hpp"
#include "topologies/topology.hpp"

using namespace parashift;
using core::CollectiveKind;
using core::TimeNs;

namespace {

// One GPU per node on rail 0 of a 16-node rail fat-tree: 0, 8, ..., 120.
std::vector<int> one_per_node(int nodes) {
  std::vector<int> gpus;
  for (int n = 0; n < nodes; ++n) gpus.push_back(8 * n);
  return gpus;
}

TimeNs run_alone(const topo::Topology& t,
                 const std::function<void(sim::FlowNetwork&, std::function<void(TimeNs)>)>& start,
                 topo::LinkId slow_link = -1, double share = 1) {
  sim::Kernel k;
  sim::FlowNetwork net(k, t);
  if (slow_link >= 0) net.set_link_bandwidth(slow_link, t.link(slow_link).bandwidth_Bps * share);
  TimeNs done = -1;
  start(net, [&done](TimeNs t_ns) { done = t_ns; });
  k.run();
  return done;
}

}  // namespace

TEST_CASE("NCCL's tree flows: a double binary tree per channel over the ring's hosts") {
  // 4 hosts of 2 members each, ring order 10 11 | 20 21 | 30 31 | 40 41
  // (host = id / 10): channel j joins member j of each host, so channels
  // {10, 20, 30, 40} and {11, 21, 31, 41}. Over 4 nodes tree 0 is
  // 0 <- 2 <- {1, 3} and tree 1 its mirror 3 <- 1 <- {0, 2}: 3 edges a
  // tree, both ways, 2 trees, 2 channels = 24 pairs.
  const std::vector<int> ring = {10, 11, 20, 21, 30, 31, 40, 41};
  const core::TreeFlows f = core::nccl_tree_flows(ring, [](int id) { return id / 10; });
  CHECK(f.channels == 2);
  CHECK(f.pairs.size() == 24);
  auto has = [&f](int a, int b) {
    return std::find(f.pairs.begin(), f.pairs.end(), std::make_pair(a, b)) != f.pairs.end();
  };
  CHECK(has(30, 10));        // tree 0: node 2 under root 0
  CHECK(has(10, 30));        // and the broadcast back down
  CHECK(has(21, 41));        // tree 1 in channel 1: node 1 under root 3
  CHECK_FALSE(has(10, 40));  // nodes 0 and 3 are not neighbours in either tree
  CHECK_FALSE(has(10, 21));  // channels never cross rails
  // Another order moves the roots: hosts 4 3 2 1 make 40 tree 0's root.
  const core::TreeFlows g =
      core::nccl_tree_flows({40, 41, 30, 31, 20, 21, 10, 11}, [](int id) { return id / 10; });
  CHECK(std::find(g.pairs.begin(), g.pairs.end(), std::make_pair(20, 40)) != g.pairs.end());
  // Over an odd count tree 1 is tree 0 shifted by one, not mirrored: over
  // 5 nodes tree 0 is 0 <- 4 <- 2 <- {1, 3}, tree 1 is 1 <- 0 <- 3 <- {2, 4};
  // each node sends (edges it has, both trees) 3, 2, 4, 4, 3 flows: the
  // second node, not the last, is the other light one.
  const core::TreeFlows odd = core::nccl_tree_flows({0, 1, 2, 3, 4}, [](int id) { return id; });
  std::vector<int> out(5, 0);
  for (const auto& [from, to] : odd.pairs) ++out[static_cast<std::size_t>(from)];
  CHECK(out == std::vector<int>{3, 2, 4, 4, 3});
  // One host: no tree between nodes.
  CHECK(core::nccl_tree_flows({10, 11}, [](int id) { return id / 10; }).channels == 0);
}

TEST_CASE("a tree all-reduce alone takes NCCL's time, and a slow link only its edges cross") {
  const topo::Topology t = topo::generate_topology("rail-fat-tree", {{"nodes", "16"}});
  const core::DeviceSpec& device = core::device_preset("h100-sxm-80gb");
  const core::NcclFabric fabric = core::cluster_view_of(t, device).nccl;
  const std::vector<int> gpus = one_per_node(16);
  const double bytes = 16.0 * (1 << 20);
  const sim::CoflowModel model =
      sim::coflow_model(t, fabric, CollectiveKind::AllReduce, bytes, gpus, 0);
  // At 16 MiB on 16 nodes NCCL's tuner picks the tree (parashift
  // collectives --nodes 16 --gpus-per-node 1: tree/LL128 up to 16 MiB, the
  // ring from 32 MiB, where the tree's medium-size share is 0.6-0.7).
  REQUIRE(sim::runs_as_tree(model, CollectiveKind::AllReduce));
  auto tree = [&](sim::FlowNetwork& net, std::function<void(TimeNs)> done) {
    CHECK(sim::start_collective_coflow(net, fabric, CollectiveKind::AllReduce, bytes, gpus, 0,
                                       std::move(done)));
  };
  auto ring = [&](sim::FlowNetwork& net, std::function<void(TimeNs)> done) {
    sim::start_ring_coflow(net, model, CollectiveKind::AllReduce, bytes, gpus, 0, std::move(done),
                           core::TrafficClass::Other);
  };
  // Alone, both shapes take NCCL's time: the path model's closed form.
  const sim::PathModel paths(t);
  const TimeNs closed =
      sim::ring_collective_ns(paths, fabric, CollectiveKind::AllReduce, bytes, gpus);
  CHECK(run_alone(t, tree) == doctest::Approx(static_cast<double>(closed)).epsilon(1e-6));
  CHECK(run_alone(t, ring) == doctest::Approx(static_cast<double>(closed)).epsilon(1e-6));
  // The link into GPU 0 at 60%. Around the ring GPU 0 receives one flow,
  // the whole 2(n-1)/n of the buffer: its bandwidth term takes 1/0.6 as
  // long. In the trees node 0 is tree 0's root (one child, 8) and a leaf of
  // tree 1 (under node 1): it receives 2 of the 4 flows an interior node
  // does, B/2 each, at most 0.3 of the rate each against the interior
  // nodes' 0.25: the tree is not slowed at all.
  const auto into_gpu0 = t.route(gpus[1], gpus[0], 0);
  const topo::LinkId last = into_gpu0.back();
  const TimeNs tree_slow = run_alone(t, tree, last, 0.6);
  const TimeNs ring_slow = run_alone(t, ring, last, 0.6);
  CHECK(tree_slow == doctest::Approx(static_cast<double>(closed)).epsilon(1e-6));
  const double bandwidth_ns = static_cast<double>(model.nccl.bandwidth_ns);
  CHECK(ring_slow ==
        doctest::Approx(static_cast<double>(closed) + bandwidth_ns * (1 / 0.6 - 1)).epsilon(1e-6));
  // Pinned to rings (cluster.nccl_algo: ring, NcclFabric::algo), the same
  // call runs the ring's flows at the ring's own NCCL time.
  core::NcclFabric rings = fabric;
  rings.algo = core::NcclAlgo::Ring;
  const sim::CoflowModel pinned =
      sim::coflow_model(t, rings, CollectiveKind::AllReduce, bytes, gpus, 0);
  CHECK(pinned.nccl.algo == core::NcclAlgo::Ring);
  CHECK_FALSE(sim::runs_as_tree(pinned, CollectiveKind::AllReduce));
  const TimeNs ring_closed =
      sim::ring_collective_ns(paths, rings, CollectiveKind::AllReduce, bytes, gpus);
  CHECK(ring_closed != closed);
  auto pinned_run = [&](sim::FlowNetwork& net, std::function<void(TimeNs)> done) {
    CHECK_FALSE(sim::start_collective_coflow(net, rings, CollectiveKind::AllReduce, bytes, gpus, 0,
                                             std::move(done)));
  };
  CHECK(run_alone(t, pinned_run) ==
        doctest::Approx(static_cast<double>(ring_closed)).epsilon(1e-6));
}
