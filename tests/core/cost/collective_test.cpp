#include <doctest/doctest.h>

#include "core/cost/estimate.hpp"

using namespace parashift::core;

namespace {

ClusterView cluster() {
  ClusterView c;
  c.gpus = 64;
  c.gpus_per_node = 8;
  c.intra_node_Bps = 100e9;
  c.inter_node_Bps = 10e9;
  c.intra_node_latency_ns = 1'000;
  c.inter_node_latency_ns = 5'000;
  return c;
}

}  // namespace

TEST_CASE("collective_ns: ring all-reduce inside a node uses NVLink and 2(n-1)/n") {
  // 8 ranks, 1 GB: bus bytes 2*7/8 * 1e9 = 1.75e9 at 100 GB/s -> 17.5 ms;
  // 2*(8-1) = 14 steps x 1 us -> 17'514'000 ns.
  CHECK(collective_ns(CollectiveKind::AllReduce, 1e9, 8, 8, cluster()) == 17'514'000);
}

TEST_CASE("collective_ns: reduce-scatter across nodes runs at the NIC rate") {
  // 4 ranks one per node, 400 MB: 3/4 * 4e8 = 3e8 B at 10 GB/s -> 30 ms;
  // 3 steps x 5 us -> 30'015'000 ns.
  CHECK(collective_ns(CollectiveKind::ReduceScatter, 4e8, 4, 1, cluster()) == 30'015'000);
  // All-gather has the same bus factor and step count.
  CHECK(collective_ns(CollectiveKind::AllGather, 4e8, 4, 1, cluster()) == 30'015'000);
}

TEST_CASE("collective_ns: a group that spans nodes is bound by the NIC even with ranks inside") {
  // 16 ranks, 8 per node: 2*15/16 * 1.6e9 = 3e9 B at 10 GB/s -> 300 ms; 30 steps x 5 us.
  CHECK(collective_ns(CollectiveKind::AllReduce, 1.6e9, 16, 8, cluster()) == 300'150'000);
}

TEST_CASE("collective_ns: send/recv and trivial groups") {
  // One hop across nodes: 1e8 B at 10 GB/s -> 10 ms + 5 us.
  CHECK(collective_ns(CollectiveKind::SendRecv, 1e8, 2, 1, cluster()) == 10'005'000);
  CHECK(collective_ns(CollectiveKind::AllReduce, 1e9, 1, 1, cluster()) == 0);
  CHECK(collective_ns(CollectiveKind::AllReduce, 0.0, 8, 8, cluster()) == 0);
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
