// The gradient sync's steps per mode and compressor (core/cost/grad_sync.hpp),
// and what they do to the cost model's estimate.
#include <doctest/doctest.h>

#include "core/cost/estimate.hpp"
#include "core/cost/grad_sync.hpp"
#include "core/scenario/cluster_view.hpp"
#include "core/validation/published_run.hpp"
#include "test_models.hpp"

using namespace parashift::core;

namespace {

ParallelPlan dp_plan(SyncMode sync, const char* compression) {
  ParallelPlan p;
  p.tp = 2;
  p.pp = 1;
  p.dp = 16;
  p.global_batch = 64;
  p.sync = sync;
  p.compression = parse_compression(compression);
  return p;
}

}  // namespace

TEST_CASE("flat uncompressed sync is one all-reduce over the group") {
  const auto steps = grad_sync_steps(dp_plan(SyncMode::Flat, "none"), {}, 1e9, 4.0, 4);
  REQUIRE(steps.size() == 1);
  CHECK(steps[0].scope == SyncScope::Group);
  CHECK(steps[0].call.kind == CollectiveKind::AllReduce);
  CHECK(steps[0].call.bytes == 1e9);
  CHECK(steps[0].ranks == 16);
  CHECK(steps[0].ranks_per_node == 4);
}

TEST_CASE(
    "hierarchical sync: node reduce-scatter, inter-node all-reduce of a shard, node all-gather") {
  // dp 16, 4 a node: 4 nodes; the inter-node step carries 1e9 / 4 B per rank.
  const auto steps = grad_sync_steps(dp_plan(SyncMode::Hierarchical, "none"), {}, 1e9, 4.0, 4);
  REQUIRE(steps.size() == 3);
  CHECK(steps[0].scope == SyncScope::IntraNode);
  CHECK(steps[0].call.kind == CollectiveKind::ReduceScatter);
  CHECK(steps[0].ranks == 4);
  CHECK(steps[1].scope == SyncScope::InterNode);
  CHECK(steps[1].call.kind == CollectiveKind::AllReduce);
  CHECK(steps[1].call.bytes == 2.5e8);
  CHECK(steps[1].ranks == 4);
  CHECK(steps[1].ranks_per_node == 1);
  CHECK(steps[2].call.kind == CollectiveKind::AllGather);
  SUBCASE("one replica a node: only the inter-node step") {
    const auto one = grad_sync_steps(dp_plan(SyncMode::Hierarchical, "none"), {}, 1e9, 4.0, 1);
    REQUIRE(one.size() == 1);
    CHECK(one[0].scope == SyncScope::InterNode);
  }
}

TEST_CASE("hierarchical PowerSGD compresses each rank's shard of rows between nodes") {
  // One 4096 x 1024 matrix, 4 a node: the shard is 1024 x 1024; P and Q are
  // 1024 x 4 floats each, 16 KiB.
  const std::vector<MatrixShape> m{{4096, 1024, 1}};
  const auto steps =
      grad_sync_steps(dp_plan(SyncMode::Hierarchical, "powersgd:4"), m, 4096.0 * 1024 * 4, 4.0, 4);
  REQUIRE(steps.size() == 4);
  CHECK(steps[1].call.bytes == 1024.0 * 4 * 4);
  CHECK(steps[2].call.bytes == 1024.0 * 4 * 4);
  CHECK(steps[1].scope == SyncScope::InterNode);
  CHECK(steps[3].scope == SyncScope::IntraNode);
}

TEST_CASE("a bucket carries its share of a layer's matrices") {
  // Llama-style layer of the test model at tp 2; a bucket of half a layer's
  // matrix elements counts each matrix 0.5 times.
  const ModelSpec model = test::gpt3_175b();
  const auto layer = layer_gradient_matrices(model, 2, 1.0);
  double elements = 0;
  for (const auto& m : layer) elements += m.elements();
  // QKV h x 3h/2, O h/2 x h, up h x 4h/2, down 4h/2 x h: 6 h^2 in all at tp 2.
  const double h = model.hidden;
  CHECK(elements == doctest::Approx(6.0 * h * h));
  ParallelPlan p = dp_plan(SyncMode::Flat, "powersgd:4");
  for (const auto& m : bucket_gradient_matrices(p, model, elements / 2)) CHECK(m.count == 0.5);
}

TEST_CASE("on slow rails the compressed sync costs less in the estimate, and never nothing") {
  // GPT-3 175B, tp 8 pp 8 dp 4 (one replica a node) on 8-GPU nodes at
  // 25 Gb/s a NIC: the fp32 gradient all-reduce of a stage's 2.7e9 B is
  // seconds, PowerSGD rank 4 sends (rows + cols) x 4 floats a matrix.
  const DeviceSpec& d = device_preset("h100-sxm-80gb");
  ParallelPlan p = test::plan_175b();
  p.optimizer_sharding = OptimizerSharding::None;
  ClusterView cluster = published_cluster(d, p.gpus(), 8);
  cluster.inter_node_Bps = 25e9 / 8;
  const IterationEstimate flat = estimate_iteration(test::gpt3_175b(), d, cluster, p, 2048);
  p.compression = parse_compression("powersgd:4");
  const IterationEstimate psgd = estimate_iteration(test::gpt3_175b(), d, cluster, p, 2048);
  CHECK(psgd.dp_comm_ns < flat.dp_comm_ns / 10);
  CHECK(psgd.dp_comm_ns > 0);
  CHECK(psgd.total_ns < flat.total_ns);
}

TEST_CASE("delayed sync defers all but the node reduce-scatter, and hides them behind compute") {
  const auto steps = grad_sync_steps(dp_plan(SyncMode::Delayed, "none"), {}, 1e9, 4.0, 4);
  REQUIRE(steps.size() == 3);
  CHECK_FALSE(steps[0].deferred);  // the node reduce-scatter, behind this backward
  CHECK(steps[1].deferred);        // inter-node all-reduce
  CHECK(steps[2].deferred);        // node all-gather
  // GPT-3 175B on 25 Gb/s rails (the case above; dp 4, one replica a node,
  // so every step is inter-node and deferred): hierarchical exposes the
  // all-reduce past backward; delayed runs it under the next iteration's
  // compute, so it exposes less, with the same bytes. Its deferred steps run
  // once over the stage, not per bucket as hierarchical's do (Megatron's 40M
  // parameters a bucket), so it pays their call latencies once: its comm
  // time is at most hierarchical's and within 1% of it (2.856 s against
  // 2.863 s here).
  const DeviceSpec& d = device_preset("h100-sxm-80gb");
  ParallelPlan p = test::plan_175b();
  p.optimizer_sharding = OptimizerSharding::None;
  ClusterView cluster = published_cluster(d, p.gpus(), 8);
  cluster.inter_node_Bps = 25e9 / 8;
  p.sync = SyncMode::Hierarchical;
  const IterationEstimate h = estimate_iteration(test::gpt3_175b(), d, cluster, p, 2048);
  p.sync = SyncMode::Delayed;
  const IterationEstimate delayed = estimate_iteration(test::gpt3_175b(), d, cluster, p, 2048);
  CHECK(delayed.dp_comm_ns <= h.dp_comm_ns);
  CHECK(static_cast<double>(delayed.dp_comm_ns) > 0.99 * static_cast<double>(h.dp_comm_ns));
  CHECK(delayed.dp_comm_exposed_ns < h.dp_comm_exposed_ns);
  CHECK(delayed.total_ns < h.total_ns);
}

TEST_CASE("scope rings keep the order the ring reaches hosts and members in") {
  // Members 5 4 0 1 6 7 2 3 on hosts of two members each (id / 2): hosts
  // reached in the order 2, 0, 3, 1.
  const std::vector<int> ring{5, 4, 0, 1, 6, 7, 2, 3};
  auto host_of = [](int id) { return id / 2; };
  CHECK(scope_rings(ring, SyncScope::Group, host_of) == std::vector<std::vector<int>>{ring});
  CHECK(scope_rings(ring, SyncScope::IntraNode, host_of) ==
        std::vector<std::vector<int>>{{5, 4}, {0, 1}, {6, 7}, {2, 3}});
  // Between nodes: the first member of each host in that order, then the second.
  CHECK(scope_rings(ring, SyncScope::InterNode, host_of) ==
        std::vector<std::vector<int>>{{5, 0, 6, 2}, {4, 1, 7, 3}});
}

TEST_CASE(
    "a stage's sync runs bucket by bucket: each call's latency per bucket, the last exposed") {
  // dp 16: Megatron's buckets hold max(40M, 16M) = 40M parameters, so 100M
  // parameters are 3 buckets of 33.3M. Uncompressed flat: one all-reduce of
  // 33.3M x 4 B per bucket, so the stage's sync is 3 of those, more than one
  // all-reduce of all 400 MB by two calls' latency.
  const DeviceSpec& d = device_preset("h100-sxm-80gb");
  const ClusterView cluster = published_cluster(d, 32, 8);
  const ParallelPlan p = dp_plan(SyncMode::Flat, "none");
  const StageSync s = stage_sync(p, test::gpt3_175b(), 100e6, 4.0, 4, cluster, compute_rates(d));
  CHECK(s.buckets == 3);
  CHECK(s.deferred_ns == 0);
  CHECK(s.bucket_ns == collective_ns(CollectiveKind::AllReduce, 100e6 / 3 * 4.0, 16, 4, cluster));
  CHECK(s.now_ns() == 3 * s.bucket_ns);
  CHECK(s.now_ns() > collective_ns(CollectiveKind::AllReduce, 400e6, 16, 4, cluster));
  // With a compressor its GPU time runs before each bucket's steps.
  const ParallelPlan c = dp_plan(SyncMode::Flat, "powersgd:4");
  const StageSync sc = stage_sync(c, test::gpt3_175b(), 100e6, 4.0, 4, cluster, compute_rates(d));
  const TimeNs compress =
      bucket_compression_ns(c, test::gpt3_175b(), 100e6 / 3, 4, compute_rates(d));
  CHECK(compress > 0);
  CHECK(sc.bucket_ns > compress);

  // Exposure, 4 buckets of 100 ns: bucket b is ready at (b + 1) / 4 of backward.
  const StageSync four{4, 100, 0};
  // Backward 1000 ns: ready at 250, 500, 750, 1000; each done 100 ns later,
  // so only the last bucket's 100 ns stick out.
  CHECK(stage_sync_exposed_ns(four, 1000) == 100);
  // Backward 200 ns: ready at 50..200, the stream busy from 50 to 450:
  // 250 ns past backward's end (= 400 - 200 x 3 / 4).
  CHECK(stage_sync_exposed_ns(four, 200) == 250);
  CHECK(stage_sync_exposed_ns(StageSync{}, 200) == 0);
}
