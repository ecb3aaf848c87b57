#include <doctest/doctest.h>

#include <numeric>
#include <stdexcept>

#include "../test_topologies.hpp"
#include "core/cost/nccl_tree.hpp"
#include "network_topologies.hpp"
#include "sim/collective.hpp"
#include "sim/network/collectives.hpp"

using namespace parashift;
using core::CollectiveKind;
using sim::CollectiveAlgorithm;
using sim::TimeNs;

namespace {

std::vector<int> iota(int n, int first = 0) {
  std::vector<int> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), first);
  return v;
}

// Runs one collective alone on a fresh network; returns its duration.
TimeNs run_alone(const topo::Topology& t, const sim::CollectiveSpec& spec) {
  sim::Kernel k;
  sim::FlowNetwork net(k, t);
  TimeNs done = -1;
  sim::run_collective(net, spec, [&](TimeNs t_ns) { done = t_ns; });
  k.run();
  REQUIRE(net.active_flows() == 0);
  return done;
}

}  // namespace

TEST_CASE("ring collectives alone on a star agree with the contention-free model") {
  // 4 GPUs, 100 GB/s, 1 us per link. Ring neighbours i -> i+1 use GPU i's
  // uplink and GPU i+1's downlink: no two flows of a round share a link.
  const auto t = test::star(4, 100e9, 1'000);
  const sim::PathModel paths(t);
  for (const auto kind :
       {CollectiveKind::AllReduce, CollectiveKind::ReduceScatter, CollectiveKind::AllGather}) {
    CAPTURE(core::to_string(kind));
    const sim::CollectiveSpec spec{kind, CollectiveAlgorithm::Ring, 1e9, iota(4)};
    CHECK(run_alone(t, spec) == sim::ring_wire_ns(paths, kind, 1e9, iota(4)));
  }
  // All-reduce: chunk 250 MB -> 2.5 ms + 2 us per round, 2(n-1) = 6 rounds.
  CHECK(run_alone(t, {CollectiveKind::AllReduce, CollectiveAlgorithm::Ring, 1e9, iota(4)}) ==
        6 * 2'502'000);
}

TEST_CASE("ring all-reduce on a star with a slow GPU: the slowest neighbour sets every round") {
  auto t = test::star(4, 100e9, 1'000);
  t.set_link_bandwidth(test::uplink(t, 2), 50e9);
  const sim::PathModel paths(t);
  // Round time: 250 MB / 50 GB/s = 5 ms + 2 us, 6 rounds (as ring_wire_ns).
  const TimeNs flow =
      run_alone(t, {CollectiveKind::AllReduce, CollectiveAlgorithm::Ring, 1e9, iota(4)});
  CHECK(flow == 6 * 5'002'000);
  CHECK(flow == sim::ring_wire_ns(paths, CollectiveKind::AllReduce, 1e9, iota(4)));
}

TEST_CASE("two all-reduces over one oversubscribed uplink take twice as long") {
  // GPUs 0, 1 left; 2, 3 right; 100 GB/s everywhere, including the one
  // left-right cable (2:1 oversubscribed). 1 us per link, 3 links across.
  const auto t = test::dumbbell(2, 100e9, 100e9, 1'000);
  const sim::PathModel paths(t);
  const sim::CollectiveSpec a{CollectiveKind::AllReduce, CollectiveAlgorithm::Ring, 1e9, {0, 2}};
  const sim::CollectiveSpec b{CollectiveKind::AllReduce, CollectiveAlgorithm::Ring, 1e9, {1, 3}};
  // Alone: 2 rounds of 0.5 GB; 0 -> 2 and 2 -> 0 use opposite directions:
  // 5 ms + 3 us per round.
  const TimeNs alone = run_alone(t, a);
  CHECK(alone == 2 * 5'003'000);
  CHECK(alone == sim::ring_wire_ns(paths, CollectiveKind::AllReduce, 1e9, {0, 2}));

  // Together: 0 -> 2 and 1 -> 3 share left -> right (and the reverse flows
  // right -> left): 50 GB/s each, 10 ms + 3 us per round. The contention-free
  // model still says 10.006 ms for each.
  sim::Kernel k;
  sim::FlowNetwork net(k, t);
  TimeNs done_a = -1;
  TimeNs done_b = -1;
  sim::run_collective(net, a, [&](TimeNs t_ns) { done_a = t_ns; });
  sim::run_collective(net, b, [&](TimeNs t_ns) { done_b = t_ns; });
  k.run();
  CHECK(done_a == 2 * 10'003'000);
  CHECK(done_b == 2 * 10'003'000);
  CHECK(static_cast<double>(done_a) / static_cast<double>(alone) ==
        doctest::Approx(2.0).epsilon(0.001));
}

TEST_CASE("hierarchical beats ring all-reduce on 2 DGX H100 nodes") {
  // rail-fat-tree, 2 nodes: NVLink 450 GB/s and 350 ns per GPU-NVSwitch link;
  // GPU-NIC 50 GB/s (400 Gb/s) 1 us; NIC-leaf, leaf-spine 50 GB/s 300 ns.
  // Same-rail GPUs of the two nodes meet at their rail's leaf (4 links,
  // 2.6 us); other cross-node pairs go through a spine (6 links, 3.2 us).
  const auto t = topo::generate_topology("rail-fat-tree", {{"nodes", "2"}, {"node", "dgx-h100"}});
  REQUIRE(t.gpu_count() == 16);
  const double bytes = 1.6e9;

  // Ring over GPUs 0..15: 30 rounds of 1.6 GB / 16 = 100 MB. Every round has
  // two cross-node flows (7 -> 8, 15 -> 0) at 50 GB/s through different
  // NICs and spines: 2 ms + 3.2 us; the NVLink flows finish long before.
  const TimeNs ring =
      run_alone(t, {CollectiveKind::AllReduce, CollectiveAlgorithm::Ring, bytes, iota(16)});
  CHECK(ring == 30 * 2'003'200);

  // Hierarchical, 8 GPUs per host:
  //  1. reduce-scatter in each node: 7 rounds of 200 MB at 450 GB/s:
  //     444,444.4 ns -> 444,445 + 0.7 us = 445,145 ns; 7 rounds = 3,116,015.
  //  2. 8 rail rings of 2 ranks all-reduce 200 MB: 2 rounds of 100 MB at
  //     50 GB/s, each rail on its own NICs and leaf: 2 x (2 ms + 2.6 us).
  //  3. all-gather in each node: as 1.
  sim::CollectiveSpec hier{CollectiveKind::AllReduce, CollectiveAlgorithm::Hierarchical, bytes,
                           iota(16)};
  hier.gpus_per_host = 8;
  const TimeNs hierarchical = run_alone(t, hier);
  CHECK(hierarchical == 3'116'015 + 2 * 2'002'600 + 3'116'015);
  // Why: the ring drives 2(n-1)/n x 1.6 GB = 3 GB through one 50 GB/s NIC
  // per round, one rank pair at a time; hierarchical sends only 2(H-1)/H x
  // 200 MB = 200 MB per GPU across nodes, on all 8 rails at once, and moves
  // the rest over NVLink: ~5.9x faster.
  CHECK(hierarchical * 5 < ring);
}

TEST_CASE("double binary tree: NCCL's trees") {
  // Tree 0 over 8 ranks: 0 <- 4 <- {2, 6}, 2 <- {1, 3}, 6 <- {5, 7}.
  const auto trees = core::nccl_double_binary_tree(8);
  CHECK(trees[0].parent == std::vector<int>{-1, 2, 4, 2, 0, 6, 4, 6});
  CHECK(trees[0].height == 3);
  // Tree 1 mirrors (r -> 7 - r): root 7; the odd leaves of tree 0 are inner here.
  CHECK(trees[1].parent == std::vector<int>{1, 3, 1, 7, 5, 3, 5, -1});
  // Odd n shifts by one instead: tree 0 over 3 ranks is 0 <- 2 <- 1;
  // shifted (r -> r+1): 1 <- 0 <- 2.
  const auto odd = core::nccl_double_binary_tree(3);
  CHECK(odd[0].parent == std::vector<int>{-1, 2, 0});
  CHECK(odd[1].parent == std::vector<int>{1, -1, 0});
}

TEST_CASE("double binary tree all-reduce of 2 ranks: bytes / bandwidth + (chunks + 1) latencies") {
  const auto t = test::star(2, 100e9, 1'000);
  sim::CollectiveSpec spec{
      CollectiveKind::AllReduce, CollectiveAlgorithm::DoubleBinaryTree, 1e9, {0, 1}};
  spec.pipeline_chunks = 8;
  // Trees: 0 <- 1 and 1 <- 0, height 1: 8 + 2 - 1 = 9 rounds of 62.5 MB
  // chunks (0.5 GB per tree / 8). Round 0 (up only) and round 8 (down only):
  // one flow per direction, 625 us + 2 us. Rounds 1-7: each GPU's uplink
  // carries one tree's reduce and the other's broadcast: 50 GB/s, 1.25 ms + 2 us.
  // Total 2 x 627 us + 7 x 1,252 us = 1 GB / 100 GB/s + 9 x 2 us.
  CHECK(run_alone(t, spec) == 10'018'000);
}

TEST_CASE("double binary tree all-reduce on 8 ranks: between its bandwidth bounds, behind ring") {
  const auto t = test::star(8, 100e9, 1'000);
  sim::CollectiveSpec spec{CollectiveKind::AllReduce, CollectiveAlgorithm::DoubleBinaryTree, 8e9,
                           iota(8)};
  spec.pipeline_chunks = 32;
  const TimeNs tree = run_alone(t, spec);
  // Trees (above): tree 0 inner ranks {0, 2, 4, 6}, tree 1 inner {1, 3, 5, 7};
  // height 3 -> 32 + 6 - 1 = 37 rounds of 4 GB / 32 = 125 MB chunks.
  // Lower bound: rank 2 sends 4 GB up tree 0, 4 GB to each of its 2 children,
  // 4 GB up tree 1: 16 GB on one 100 GB/s uplink = 160 ms, + 37 x 2 us.
  // Upper bound: per round a rank sends at most 3 flows in the tree where it
  // is inner and 1 in the other, so every flow gets >= 25 GB/s:
  // <= 500 MB / 100 GB/s + 2 us = 5.002 ms per round.
  CHECK(tree >= 160'000'000 + 37 * 2'000);
  CHECK(tree <= 37 * 5'002'000);
  // Ring: 14 rounds of 1 GB at 100 GB/s, 10 ms + 2 us: bandwidth-optimal
  // (2(n-1)/n x 8 GB per uplink = 14 GB). On a flat star a binary tree's
  // inner ranks send twice, so the ring wins; the tree wins on latency only.
  const TimeNs ring =
      run_alone(t, {CollectiveKind::AllReduce, CollectiveAlgorithm::Ring, 8e9, iota(8)});
  CHECK(ring == 14 * 10'002'000);
  CHECK(tree > ring);
}

TEST_CASE("double binary tree beats ring on latency for small messages") {
  // 64 ranks, 64 KB: the ring pays 2 x 63 = 126 latencies of 2 us (252 us);
  // the tree (height 6) with 1 chunk pays 1 + 12 - 1 = 12 rounds (24 us),
  // while its bandwidth terms are tiny (32 KB / 100 GB/s = 0.33 us per flow).
  const auto t = test::star(64, 100e9, 1'000);
  sim::CollectiveSpec spec{CollectiveKind::AllReduce, CollectiveAlgorithm::DoubleBinaryTree, 65536,
                           iota(64)};
  spec.pipeline_chunks = 1;
  const TimeNs tree = run_alone(t, spec);
  const TimeNs ring =
      run_alone(t, {CollectiveKind::AllReduce, CollectiveAlgorithm::Ring, 65536, iota(64)});
  CHECK(ring > 252'000);
  CHECK(tree < 40'000);
}

TEST_CASE("all-to-all: rounds of shifted pairs vs all pairs at once") {
  const auto t = test::star(4, 100e9, 1'000);
  const sim::PathModel paths(t);
  // 1.2 GB per rank, 300 MB to each peer.
  // Ring: 3 rounds; each round every uplink and downlink carries one flow:
  // 3 ms + 2 us per round.
  const sim::CollectiveSpec ring{CollectiveKind::AllToAll, CollectiveAlgorithm::Ring, 1.2e9,
                                 iota(4)};
  CHECK(run_alone(t, ring) == 3 * 3'002'000);
  CHECK(run_alone(t, ring) == sim::ring_wire_ns(paths, CollectiveKind::AllToAll, 1.2e9, iota(4)));
  // All pairs: 12 flows; every uplink and downlink carries 3 -> 33.3 GB/s each;
  // 300 MB / 33.3 GB/s = 9 ms, latency paid once: 9 ms + 2 us.
  const sim::CollectiveSpec pairs{CollectiveKind::AllToAll, CollectiveAlgorithm::AllPairs, 1.2e9,
                                  iota(4)};
  CHECK(run_alone(t, pairs) == 9'002'000);
}

TEST_CASE("send/recv is one flow") {
  const auto t = test::star(4, 100e9, 1'000);
  // 1 GB / 100 GB/s + 2 us.
  CHECK(run_alone(t, {CollectiveKind::SendRecv, CollectiveAlgorithm::Ring, 1e9, {3, 1}}) ==
        10'002'000);
}

TEST_CASE("empty collectives finish at once, bad specs throw") {
  const auto t = test::star(4, 100e9, 1'000);
  CHECK(run_alone(t, {CollectiveKind::AllReduce, CollectiveAlgorithm::Ring, 1e9, {2}}) == 0);
  CHECK(run_alone(t, {CollectiveKind::AllReduce, CollectiveAlgorithm::Ring, 0, iota(4)}) == 0);
  sim::Kernel k;
  sim::FlowNetwork net(k, t);
  const auto run = [&](sim::CollectiveSpec spec) { sim::run_collective(net, spec, {}); };
  sim::CollectiveSpec hier{CollectiveKind::AllReduce, CollectiveAlgorithm::Hierarchical, 1e9,
                           iota(4)};
  hier.gpus_per_host = 3;
  CHECK_THROWS_AS(run(hier), std::invalid_argument);
  CHECK_THROWS_AS(
      run({CollectiveKind::ReduceScatter, CollectiveAlgorithm::DoubleBinaryTree, 1e9, iota(4)}),
      std::invalid_argument);
  CHECK_THROWS_AS(run({CollectiveKind::AllReduce, CollectiveAlgorithm::AllPairs, 1e9, iota(4)}),
                  std::invalid_argument);
  CHECK_THROWS_AS(run({CollectiveKind::AllReduce, CollectiveAlgorithm::Ring, 1e9, {0, 1, 0}}),
                  std::invalid_argument);
  CHECK_THROWS_AS(run({CollectiveKind::SendRecv, CollectiveAlgorithm::Ring, 1e9, iota(3)}),
                  std::invalid_argument);
}

TEST_CASE("nccl-tests algbw and busbw") {
  // 1 GB in 10 ms: algbw 100 GB/s.
  CHECK(sim::algbw_Bps(1e9, 10'000'000) == doctest::Approx(100e9));
  // all-reduce x 2(n-1)/n: n = 8 -> 1.75 -> 175 GB/s.
  CHECK(sim::busbw_Bps(CollectiveKind::AllReduce, 8, 1e9, 10'000'000) == doctest::Approx(175e9));
  // reduce-scatter, all-gather, all-to-all x (n-1)/n: 87.5 GB/s.
  CHECK(sim::busbw_Bps(CollectiveKind::ReduceScatter, 8, 1e9, 10'000'000) ==
        doctest::Approx(87.5e9));
  CHECK(sim::busbw_Bps(CollectiveKind::AllGather, 8, 1e9, 10'000'000) == doctest::Approx(87.5e9));
  CHECK(sim::busbw_Bps(CollectiveKind::AllToAll, 8, 1e9, 10'000'000) == doctest::Approx(87.5e9));
  // send/recv x 1.
  CHECK(sim::busbw_Bps(CollectiveKind::SendRecv, 2, 1e9, 10'000'000) == doctest::Approx(100e9));
  // A ring all-reduce alone on a 100 GB/s star reaches the link rate in busbw:
  // 4 ranks, 1 GB, 15.012 ms -> algbw 66.61 GB/s x 1.5 = 99.92 GB/s.
  const auto t = test::star(4, 100e9, 1'000);
  const TimeNs d =
      run_alone(t, {CollectiveKind::AllReduce, CollectiveAlgorithm::Ring, 1e9, iota(4)});
  CHECK(sim::busbw_Bps(CollectiveKind::AllReduce, 4, 1e9, d) ==
        doctest::Approx(99.92e9).epsilon(1e-4));
}
