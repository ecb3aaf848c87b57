#include <doctest/doctest.h>

#include <cmath>

#include "core/cost/estimate.hpp"
#include "core/cost/nccl_model.hpp"

using namespace parashift::core;

namespace {

// H100-like numbers: 450 GB/s NVLink, one 50 GB/s NIC per GPU, no wire
// latency (NCCL's hop latencies only), default fabric (0.82 NVLink and
// 0.94 NIC efficiency, NVLS off unless a test turns it on).
ClusterView cluster() {
  ClusterView c;
  c.gpus = 64;
  c.gpus_per_node = 8;
  c.intra_node_Bps = 450e9;
  c.inter_node_Bps = 50e9;
  return c;
}

}  // namespace

TEST_CASE("collective_ns: a large all-reduce in a node runs the ring's Simple protocol") {
  // 8 ranks, 1 GB: bus bytes 2*7/8 * 1e9 = 1.75e9 at 0.82 * 450 = 369 GB/s
  // -> 4'742'547 ns; latency: base 8.4 us + 14 steps x 3.4 us = 56 us.
  // (LL128: 0.92 x the rate, 40.6 us; LL: half the rate: both slower.)
  const NcclTime t =
      nccl_collective(cluster().nccl, CollectiveKind::AllReduce, 1e9, group_links(cluster(), 8, 8));
  CHECK(t.algo == NcclAlgo::Ring);
  CHECK(t.proto == NcclProto::Simple);
  CHECK(t.bandwidth_ns == 4'742'547);
  CHECK(t.latency_ns == 56'000);
  CHECK(collective_ns(CollectiveKind::AllReduce, 1e9, 8, 8, cluster()) == 4'798'547);
}

TEST_CASE("collective_ns: a tiny all-reduce pays LL's latency, one hop per ring step") {
  // 8 B over 8 ranks: ring LL 6.6 + 14 x 0.6 = 15.0 us; tree LL 6.8 +
  // 2 x 7 x 0.6 = 15.2 us; the bandwidth term rounds to 0 ns.
  const NcclTime t =
      nccl_collective(cluster().nccl, CollectiveKind::AllReduce, 8, group_links(cluster(), 8, 8));
  CHECK(t.algo == NcclAlgo::Ring);
  CHECK(t.proto == NcclProto::LL);
  CHECK(t.time_ns == 15'000);
}

TEST_CASE("collective_ns: across nodes a tree beats the ring at small sizes") {
  // 64 ranks, 8 per node, 8 B. Ring LL: 126 steps, 14 across the network:
  // 6.6 + 112 x max(0.6, 1.0 post overhead) + 14 x 2.7 = 156.4 us.
  // Tree LL: 6.8 + 2 x (7 x 0.6 + log2(8) x 5.0) = 45.2 us. Both add
  // 8 x 2 x 63/64 / 20.4 GB/s (NCCL's LL cap beyond 2 nodes) = 1 ns.
  const NcclTime t =
      nccl_collective(cluster().nccl, CollectiveKind::AllReduce, 8, group_links(cluster(), 64, 8));
  CHECK(t.algo == NcclAlgo::Tree);
  CHECK(t.time_ns == 45'201);
  const NcclTime ring = nccl_collective(cluster().nccl, CollectiveKind::AllReduce, 8,
                                        group_links(cluster(), 64, 8), NcclAlgo::Ring);
  CHECK(ring.time_ns == 156'401);
}

TEST_CASE("collective_ns: a group with k GPUs per node drives k rails") {
  // 16 ranks on 2 nodes, 8 per node, 8 GB reduce-scatter (ring only): bus
  // bytes 15/16 x 8e9 = 7.5e9 at min(369, 8 x 50 x 0.94 = 376) = 369 GB/s
  // -> 20'325'203 ns. One rank per node (2 ranks): one NIC, 47 GB/s,
  // 1/2 x 8e9 = 4e9 B -> 85'106'383 ns.
  const NcclTime rails = nccl_collective(cluster().nccl, CollectiveKind::ReduceScatter, 8e9,
                                         group_links(cluster(), 16, 8));
  CHECK(rails.bandwidth_ns == 20'325'203);
  const NcclTime one = nccl_collective(cluster().nccl, CollectiveKind::ReduceScatter, 8e9,
                                       group_links(cluster(), 2, 1));
  CHECK(one.bandwidth_ns == 85'106'383);
  // Two GPUs per node (a dp group with tp=4): 2 NICs, 94 GB/s per node.
  const NcclTime two = nccl_collective(cluster().nccl, CollectiveKind::ReduceScatter, 8e9,
                                       group_links(cluster(), 16, 2));
  // 7.5e9 / 94e9 = 79.787 ms.
  CHECK(two.bandwidth_ns == 79'787'234);
}

TEST_CASE("collective_ns: NVLS on an NVLink SHARP node, forced algorithms") {
  ClusterView c = cluster();
  c.nccl.nvlink_sharp = true;
  // 8 GiB over 8 ranks: NVLS algbw 0.61 x 450 = 274.5 GB/s -> 31'293'022 ns + 25 us;
  // busbw 8 GiB x 1.75 / 31.318 ms = 480 GB/s (nccl-tests#212: ~480).
  const NcclTime t =
      nccl_collective(c.nccl, CollectiveKind::AllReduce, 8589934592.0, group_links(c, 8, 8));
  CHECK(t.algo == NcclAlgo::Nvls);
  CHECK(t.time_ns == 31'293'022 + 25'000);
  // Forcing the ring gives the ring; forcing NVLS where it cannot run (an
  // all-gather) falls back to the ring.
  CHECK(nccl_collective(c.nccl, CollectiveKind::AllReduce, 8589934592.0, group_links(c, 8, 8),
                        NcclAlgo::Ring)
            .algo == NcclAlgo::Ring);
  CHECK(
      nccl_collective(c.nccl, CollectiveKind::AllGather, 1e9, group_links(c, 8, 8), NcclAlgo::Nvls)
          .algo == NcclAlgo::Ring);
  // NVLS-tree over 4 nodes: the nodes' 8 NICs carry the buffer twice:
  // algbw min(274.5, 376 / 2 = 188) GB/s.
  const NcclTime four = nccl_collective(c.nccl, CollectiveKind::AllReduce, 8e9,
                                        group_links(c, 32, 8), NcclAlgo::Nvls);
  CHECK(four.bandwidth_ns == 42'553'191);
}

TEST_CASE("nccl_collective: NCCL's medium-size share slows trees below 512 MiB, NVLS below 1 GiB") {
  ClusterView c = cluster();
  c.nccl.nvlink_sharp = true;
  const GroupLinks node = group_links(c, 8, 8);
  // 16 MiB: log2(2^24 / 64) = 18, Simple share 0.7: NVLS bandwidth term
  // 16'777'216 / (274.5e9 x 0.7) = 87'313 ns (61'119 ns at full share).
  const NcclTime mid =
      nccl_collective(c.nccl, CollectiveKind::AllReduce, 16777216.0, node, NcclAlgo::Nvls);
  CHECK(mid.bandwidth_ns == 87'313);
  // 1 GiB: index 24, past the table: the full 274.5 GB/s, 3'911'628 ns.
  CHECK(nccl_collective(c.nccl, CollectiveKind::AllReduce, 1073741824.0, node, NcclAlgo::Nvls)
            .bandwidth_ns == 3'911'628);
  // A tree over 8 nodes at 1 MiB (index 14). The ring's rate is min(NVLink
  // 0.82 x 450 = 369, 8 NICs x 50 x 0.94 = 376) = 369 GB/s; the tree's
  // LL128 takes 0.92 x 120/128 of it, times the LL128 share 0.6 (Simple's
  // is 0.5, LL's cap 20.4 GB/s): 190.96 GB/s, the fastest, so
  // 1'048'576 x 2 x 63/64 / 190.96e9 = 10'811 ns.
  const GroupLinks nodes8 = group_links(c, 64, 8);
  const NcclTime tree_mid =
      nccl_collective(NcclFabric{}, CollectiveKind::AllReduce, 1048576.0, nodes8, NcclAlgo::Tree);
  CHECK(tree_mid.proto == NcclProto::LL128);
  CHECK(tree_mid.bandwidth_ns == 10'811);
  // A size that is no number prices nothing rather than reading past the table.
  CHECK(nccl_collective(c.nccl, CollectiveKind::AllReduce, std::nan(""), node).time_ns == 0);
}

TEST_CASE("nccl_collective: LL's bus bandwidth is capped as NCCL caps it") {
  // Hopper inside one node: 141 GB/s (not half of 369 = 184.5 GB/s).
  // 1 MiB over 8 ranks, ring LL: 1'048'576 x 1.75 / 141e9 = 13'014 ns.
  ClusterView c = cluster();
  c.nccl.ll_max_node_Bps = 141e9;
  const NcclTime capped = nccl_collective(c.nccl, CollectiveKind::AllReduce, 1048576.0,
                                          group_links(c, 8, 8), NcclAlgo::Ring);
  // Capped, LL is still the ring's fastest protocol at 1 MiB: LL 15 us +
  // 13'014 ns = 28'014 ns; LL128 14 + 14 x 1.9 = 40.6 us + 1'835'008 /
  // 339.5e9 = 5'405 ns; Simple 56 us + 4'973 ns.
  CHECK(capped.proto == NcclProto::LL);
  CHECK(capped.bandwidth_ns == 13'014);
  // Across 2 nodes NCCL's Intel-host figure, 39 GB/s, whatever the GPU.
  const NcclTime two = nccl_collective(NcclFabric{}, CollectiveKind::AllReduce, 4096.0,
                                       group_links(c, 16, 8), NcclAlgo::Ring);
  CHECK(two.proto == NcclProto::LL);
  // 4096 x 2 x 15/16 / 39e9 = 197 ns.
  CHECK(two.bandwidth_ns == 197);
}

TEST_CASE("collective_ns: send/recv, all-to-all and trivial groups") {
  // One hop across nodes, 1e8 B: Simple at 47 GB/s -> 2'127'660 ns +
  // 8.4 + 14 us; LL128 at 0.92 x 47: 2'312'674 ns + 14 + 4 us: Simple wins.
  CHECK(collective_ns(CollectiveKind::SendRecv, 1e8, 2, 1, cluster()) == 2'127'660 + 22'400);
  // All-to-all over 16 ranks on 2 nodes: 8 of 15 peers remote; each GPU's
  // own NIC carries them: min(369, 47 x 15/8 = 88.125) GB/s for 15/16 x 1e9 B.
  const NcclTime a2a =
      nccl_collective(cluster().nccl, CollectiveKind::AllToAll, 1e9, group_links(cluster(), 16, 8));
  CHECK(a2a.bandwidth_ns == 10'638'298);
  CHECK(collective_ns(CollectiveKind::AllReduce, 1e9, 1, 1, cluster()) == 0);
  CHECK(collective_ns(CollectiveKind::AllReduce, 0.0, 8, 8, cluster()) == 0);
}

TEST_CASE("nccl_collective: a group whose ring never stays inside a node") {
  // 4 ranks, 2 per node, but no NVLink rate read (ring neighbours all on
  // other nodes): the rails alone, 2 x 50 x 0.94 = 94 GB/s; 4e9 B reduce-
  // scatter moves 3/4 x 4e9 = 3e9 B -> 31'914'894 ns.
  GroupLinks g;
  g.ranks = 4;
  g.ranks_per_node = 2;
  g.inter_Bps = 50e9;
  const NcclTime t = nccl_collective(NcclFabric{}, CollectiveKind::ReduceScatter, 4e9, g);
  CHECK(t.bandwidth_ns == 31'914'894);
}

TEST_CASE("nccl_collective: a group split 7 + 1 crosses the lone rank's NIC only") {
  // 8 ranks, 7 on one node and 1 on another (a rank moved onto a spare):
  // every ring enters and leaves the lone rank's node through its one NIC,
  // 50 x 0.94 = 47 GB/s, where 7 ranks a node would have 7 rails. The
  // reduce-scatter of 8e9 B moves 7/8 x 8e9 = 7e9 B -> 7e9 / 47e9 s =
  // 148'936'170 ns on the ring (NVLink, 300 GB/s here, is not the limit).
  GroupLinks g;
  g.ranks = 8;
  g.ranks_per_node = 7;
  g.fewest_per_node = 1;
  g.intra_Bps = 300e9;
  g.inter_Bps = 50e9;
  const NcclTime split =
      nccl_collective(NcclFabric{}, CollectiveKind::ReduceScatter, 8e9, g, NcclAlgo::Ring);
  CHECK(split.bandwidth_ns == 148'936'170);
  // Spread evenly (fewest_per_node 0: as ranks_per_node), 7 NICs carry it.
  g.fewest_per_node = 0;
  const NcclTime even =
      nccl_collective(NcclFabric{}, CollectiveKind::ReduceScatter, 8e9, g, NcclAlgo::Ring);
  CHECK(even.bandwidth_ns < split.bandwidth_ns / 5);
}

TEST_CASE("parse_nccl_algo names the four choices and nothing else") {
  NcclAlgo a = NcclAlgo::Ring;
  CHECK(parse_nccl_algo("auto", a));
  CHECK(a == NcclAlgo::Auto);
  CHECK(parse_nccl_algo("nvls", a));
  CHECK(a == NcclAlgo::Nvls);
  CHECK_FALSE(parse_nccl_algo("collnet", a));
  CHECK(a == NcclAlgo::Nvls);
}

TEST_CASE(
    "a fabric's pinned algorithm (cluster.nccl_algo, NCCL_ALGO) rules where the call says auto") {
  // 16 nodes, one rank each, 64 KiB: the tuner picks the tree (2 x 4
  // network levels against the ring's 30 network steps; parashift
  // collectives --nodes 16 --gpus-per-node 1); pinned to ring the same
  // auto call runs the ring, as an explicit Ring does.
  GroupLinks g;
  g.ranks = 16;
  g.intra_Bps = 450e9;
  g.inter_Bps = 50e9;
  const double bytes = 64.0 * (1 << 10);
  CHECK(nccl_collective(NcclFabric{}, CollectiveKind::AllReduce, bytes, g).algo == NcclAlgo::Tree);
  NcclFabric ring;
  ring.algo = NcclAlgo::Ring;
  const NcclTime pinned = nccl_collective(ring, CollectiveKind::AllReduce, bytes, g);
  CHECK(pinned.algo == NcclAlgo::Ring);
  CHECK(pinned.time_ns ==
        nccl_collective(NcclFabric{}, CollectiveKind::AllReduce, bytes, g, NcclAlgo::Ring).time_ns);
  // NCCL_ALGO's values, for the CUDA executor's environment: tree and NVLS
  // for the all-reduce only (NCCL >= 2.24 fails a collective left no algorithm).
  CHECK(std::string(nccl_algo_env(NcclAlgo::Ring)) == "Ring");
  CHECK(std::string(nccl_algo_env(NcclAlgo::Tree)) == "allreduce:tree");
  CHECK(std::string(nccl_algo_env(NcclAlgo::Nvls)) == "allreduce:nvls,nvlstree");
  CHECK(std::string(nccl_algo_env(NcclAlgo::Auto)).empty());
}

TEST_CASE("group_placement follows the tp-cp-dp-pp rank order") {
  ParallelPlan p;
  p.tp = 2;
  p.cp = 2;
  p.dp = 8;
  p.pp = 2;
  const GroupPlacement g = group_placement(p, 8);
  // tp=2 fits a node; cp ranks are 2 apart -> 8/2 = 4 slots, group of 2;
  // dp ranks are 4 apart -> 8/4 = 2 per node; 64 GPUs so the pipeline spans nodes.
  CHECK(g.tp_per_node == 2);
  CHECK(g.cp_per_node == 2);
  CHECK(g.dp_per_node == 2);
  CHECK(g.pp_crosses_nodes);
  ParallelPlan wide;
  wide.tp = 16;
  CHECK(group_placement(wide, 8).tp_per_node == 8);
}

TEST_CASE("group_placement under rank order tp-cp-pp-dp") {
  ParallelPlan p;
  p.tp = 2;
  p.dp = 4;
  p.pp = 2;
  p.order = RankOrder::TpCpPpDp;
  // dp ranks are tp * pp = 4 apart -> 8/4 = 2 per node; a pipeline spans
  // tp * pp = 4 consecutive GPUs, inside one 8-GPU node.
  GroupPlacement g = group_placement(p, 8);
  CHECK(g.dp_per_node == 2);
  CHECK_FALSE(g.pp_crosses_nodes);
  // The default order: dp ranks 2 apart -> all 4 in a node; the pipeline's
  // stages are tp * dp = 8 apart, so each hop leaves the node.
  p.order = RankOrder::TpCpDpPp;
  g = group_placement(p, 8);
  CHECK(g.dp_per_node == 4);
  CHECK(g.pp_crosses_nodes);
}
