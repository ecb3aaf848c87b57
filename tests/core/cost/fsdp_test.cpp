#include <doctest/doctest.h>

#include "core/cost/cluster_view.hpp"
#include "core/cost/fsdp.hpp"
#include "core/cost/overlap.hpp"

using namespace parashift;

TEST_CASE("overlap: a collective beside compute slows it by the published share") {
  // 0.189 of the overlapped time (Lee et al. 2025): 1000 ns of compute under
  // 400 ns of gather: 0 beyond it, 0.189 x 400 = 75.6 -> 76.
  CHECK(core::overlapped_exposed_ns(400, 1000) == 76);
  // 1000 of gather over 400 of compute: 600 beyond it, 0.189 x 400 -> 76.
  CHECK(core::overlapped_exposed_ns(1000, 400) == 600 + 76);
  // Nothing beside it, nothing charged.
  CHECK(core::overlapped_exposed_ns(0, 1000) == 0);
  CHECK(core::overlapped_exposed_ns(1000, 0) == 1000);
}

TEST_CASE("FSDP: per-layer gathers hide under compute beyond each pass's first") {
  // One layer's gather 1000, reduce-scatter 2000; the embedding's 500 and 700.
  const core::FsdpComm c{1000, 2000, 500, 700};
  // 4 layers of 600 forward: the first gather (1000) and the embedding's
  // (500) wait; each of the other 3 gathers exceeds its layer by
  // 1000 - 600 = 400 and slows its 600 of compute by 0.189 x 600 = 113.4 -> 113.
  CHECK(core::fsdp_forward_exposed_ns(c, 4, 600) == 1000 + 500 + 3 * (400 + 113));
  // Backward, 2500 per layer: the last reduce-scatter (2000) and the
  // embedding's (700), and 3 x (1000 + 2000 - 2500 = 500, plus 0.189 x 2500
  // = 472.5 -> 473 (llround rounds half away from zero)).
  CHECK(core::fsdp_backward_exposed_ns(c, 4, 2500) == 2000 + 700 + 3 * (500 + 473));
  // Compute longer than the communication hides all but the ends, and is
  // slowed while each hidden collective runs: 3 x 0.189 x 1000 = 3 x 189
  // forward, 3 x 0.189 x 3000 = 3 x 567 backward.
  CHECK(core::fsdp_forward_exposed_ns(c, 4, 10000) == 1500 + 3 * 189);
  CHECK(core::fsdp_backward_exposed_ns(c, 4, 10000) == 2700 + 3 * 567);
  // Traffic: 4 gathers + the embedding's forward; 4 x (1000 + 2000) + 500 + 700 backward.
  CHECK(core::fsdp_forward_comm_ns(c, 4) == 4500);
  CHECK(core::fsdp_backward_comm_ns(c, 4) == 13200);
  CHECK(core::fsdp_comm_ns(c, 4) == 17700);
}

TEST_CASE("FSDP: an interleaved stage pays each chunk's first gather, the sum is the chunks'") {
  const core::FsdpComm c{10, 20, 5, 7};
  const core::FsdpComm layers_only{10, 20, 0, 0};
  // 4 layers in 2 passes of 2: 2 first gathers, 2 hidden-layer excesses of
  // 10 - 6 = 4, each slowing its 6 of compute by 0.189 x 6 = 1.134 -> 1.
  CHECK(core::fsdp_forward_exposed_ns(c, 4, 6, 2) == 2 * 10 + 5 + 2 * (4 + 1));
  // The same as a chunk with the embedding plus a chunk without it, 2 layers each.
  CHECK(core::fsdp_forward_exposed_ns(c, 4, 6, 2) ==
        core::fsdp_forward_exposed_ns(c, 2, 6) + core::fsdp_forward_exposed_ns(layers_only, 2, 6));
  CHECK(core::fsdp_backward_exposed_ns(c, 4, 25, 2) ==
        core::fsdp_backward_exposed_ns(c, 2, 25) +
            core::fsdp_backward_exposed_ns(layers_only, 2, 25));
  // One layer per pass: nothing hides (every gather is a pass's first).
  CHECK(core::fsdp_forward_exposed_ns(c, 4, 1000, 4) == 4 * 10 + 5);
}

TEST_CASE("HSDP: who gathers and who all-reduces, per node") {
  core::ParallelPlan p;
  p.dp = 128;
  p.optimizer_sharding = core::OptimizerSharding::Fsdp;
  // tp 1, 8 data-parallel ranks a node, sharded over the node's 8: 16
  // replicas of each shard, one a node.
  p.dp_shard = 8;
  core::FsdpGroups g = core::fsdp_groups(p, 8);
  CHECK(g.shard == 8);
  CHECK(g.shard_per_node == 8);
  CHECK(g.replicas == 16);
  CHECK(g.replica_per_node == 1);
  // tp 4: 2 data-parallel ranks a node; a shard group of 8 spans 4 nodes.
  p.dp = 64;
  g = core::fsdp_groups(p, 2);
  CHECK(g.shard_per_node == 2);
  CHECK(g.replicas == 8);
  CHECK(g.replica_per_node == 1);
  // Sharded over 1 (plain replication): each node's 2 ranks are replicas.
  p.dp_shard = 1;
  g = core::fsdp_groups(p, 2);
  CHECK(g.replicas == 64);
  CHECK(g.replica_per_node == 2);
  // Plain FSDP: one shard group, no replicas, no all-reduce.
  p.dp_shard = 0;
  g = core::fsdp_groups(p, 2);
  CHECK(g.shard == 64);
  CHECK(g.replicas == 1);
  CHECK(core::hsdp_replica_sync_ns(core::ClusterView{}, g, 1e9, 2.0) == 0);
}
