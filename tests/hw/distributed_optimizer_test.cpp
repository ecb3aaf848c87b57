// The distributed optimizer in the executor (plan.optimizer_sharding:
// distributed; ZeRO-1): gradients reduce-scattered over the replicas, each
// rank updating its shard with its shard of Adam's moments, the weights
// all-gathered back.
#include <doctest/doctest.h>

#include "core/input_error.hpp"
#include "hw/comm/self_communicator.hpp"
#include "hw/comm/thread_communicator.hpp"
#include "hw/model/dp_shards.hpp"
#include "tests/hw/group_training.hpp"

using namespace parashift;

namespace {

core::ParallelPlan distributed(core::ParallelPlan plan) {
  plan.optimizer_sharding = core::OptimizerSharding::Distributed;
  return plan;
}

}  // namespace

TEST_CASE("shards: ceil(n / ranks) each in rank order, buckets of whole tensors") {
  CHECK(hw::shard_of(10, 4, 0) == hw::ShardRange{0, 3});
  CHECK(hw::shard_of(10, 4, 3) == hw::ShardRange{9, 1});
  CHECK(hw::shard_of(2, 4, 3) == hw::ShardRange{2, 0});  // more ranks than elements
  // Sizes 8, 8, 20 over 2 ranks, at most 16 elements a bucket: shards 4, 4
  // and 10; the first two fill one bucket (2 x 8), the third is alone (2 x 10).
  const auto buckets = hw::shard_buckets({8, 8, 20}, 2, 16);
  REQUIRE(buckets.size() == 2);
  CHECK(buckets[0].tensors == std::vector<std::size_t>{0, 1});
  CHECK(buckets[0].offsets == std::vector<std::size_t>{0, 4});
  CHECK(buckets[0].block == 8);
  CHECK(buckets[1].tensors == std::vector<std::size_t>{2});
  CHECK(buckets[1].block == 10);
}

TEST_CASE("the distributed optimizer trains as the replicated one, bit for bit") {
  // Adam and SGD are element-wise, a reduce-scatter adds the replicas'
  // gradients in the same (rank) order as the all-reduce, and the all-gather
  // moves bits: every weight ends the same.
  for (const auto kind : {hw::OptimizerKind::Adam, hw::OptimizerKind::Sgd}) {
    test::GroupRun run;
    run.job = "zero1";
    run.optimizer = kind;
    for (const auto& plan : {test::tiny_plan(1, 1, 2), test::tiny_plan(1, 2, 2),
                             test::tiny_plan(2, 1, 2), test::tiny_plan(1, 1, 4)}) {
      CAPTURE(plan.label());
      CHECK(test::train_threads(distributed(plan), run) == test::train_threads(plan, run));
    }
  }
}

TEST_CASE("the distributed optimizer keeps 1/dp of Adam's moments and moves twice the bytes") {
  // Tiny layer: Wqkv 32 x 96, Wo 32 x 32, W1 32 x 64, W2 64 x 32 = 8192
  // weights. dp 2, one stage of 4 layers: the moments (2 floats a weight)
  // shrink from 8192 to 4096 weights' worth per layer, 4 x 4096 x 2 x 4 bytes
  // = 131072 bytes less. The reduce-scatter and the all-gather each move the
  // whole gradient (8192 x 4 layers x 4 bytes, no padding: every tensor
  // splits evenly), the all-reduce once.
  test::GroupRun run;
  run.iterations = 1;
  run.job = "zero1-mem";
  std::vector<core::StepReport> replicated, sharded;
  const auto plan = test::tiny_plan(1, 1, 2);
  test::train_threads(plan, run, &replicated);
  test::train_threads(distributed(plan), run, &sharded);
  for (std::size_t r = 0; r < 2; ++r)
    CHECK(replicated.at(0).rank_peak_memory_bytes[r] - sharded.at(0).rank_peak_memory_bytes[r] ==
          doctest::Approx(131072));
  CHECK(test::comm_bytes(replicated.at(0), "dp[") == doctest::Approx(8192.0 * 4 * 4));
  CHECK(test::comm_bytes(sharded.at(0), "dp[") == doctest::Approx(2 * 8192.0 * 4 * 4));
}

TEST_CASE("the distributed optimizer: layers move with their moment shards, snapshots restore") {
  // pp 2 x dp 2, two "nodes": before iteration 2 the layers go [2,2] ->
  // [1,3] (each moment shard moves between the ranks of its dp coordinate);
  // a snapshot before iteration 3, restored before iteration 4: iteration 4
  // repeats 3, and the moved run's losses are the undisturbed run's.
  const auto plan = distributed(test::tiny_plan(1, 2, 2));
  test::GroupRun steady;
  steady.job = "zero1-steady";
  steady.iterations = 4;
  const auto undisturbed = test::train_threads(plan, steady);
  test::GroupRun run = steady;
  run.job = "zero1-moved";
  run.iterations = 5;
  run.ranks_per_node = 2;
  run.before = [](hw::HwBackend& backend, int i) {
    if (i == 2) backend.apply({core::RepartitionDirective{{1, 3}}, "test", 0});
    if (i == 3) backend.apply({core::SnapshotDirective{3}, "test", 0});
    if (i == 4) backend.apply({core::RestoreDirective{3}, "test", 0});
  };
  const auto losses = test::train_threads(plan, run);
  REQUIRE(losses.size() == 5);
  CHECK(std::vector<double>(losses.begin(), losses.begin() + 4) == undisturbed);
  CHECK(losses[4] == losses[3]);
}

TEST_CASE("FSDP is refused clearly") {
  hw::SelfCommunicator world;
  auto plan = test::tiny_plan(1, 1, 1);
  plan.optimizer_sharding = core::OptimizerSharding::Fsdp;
  CHECK_THROWS_WITH_AS(hw::HwBackend(test::tiny_model(), test::kTinySeq, 1, plan,
                                     test::tiny_options(hw::OptimizerKind::Adam, "fsdp"), world),
                       "plan.optimizer_sharding: expected none or distributed, found fsdp (the hw "
                       "executor does not run it)",
                       core::InputError);
}
