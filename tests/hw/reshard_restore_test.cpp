// A snapshot restored under another plan (HwBackend::restore of a version
// whose shards were written under another plan: a shrink's restore, or a
// relaunch on another layout): the old shards' pieces are put together
// whole and this plan's shards are cut out of them.
#include <doctest/doctest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hw/comm/thread_communicator.hpp"
#include "hw/hw_error.hpp"
#include "hw/snapshot/shard_store.hpp"
#include "tests/hw/group_training.hpp"

using namespace parashift;

namespace {

core::ParallelPlan sharded(core::ParallelPlan plan) {
  plan.optimizer_sharding = core::OptimizerSharding::Distributed;
  return plan;
}

// Rank 0's losses of iterations 3-5 of a 4-rank job that ran `from` for
// iterations 0-2 and snapshot v3, then `to`: re-planned live (`live`), or
// restarted under `to` and restored from v3.
std::vector<double> after_switch(const core::ParallelPlan& from, const core::ParallelPlan& to,
                                 bool live, const std::string& job,
                                 hw::RestoreStats* stats = nullptr) {
  auto group = hw::make_thread_group(4);
  std::vector<double> losses;
  test::run_ranks(4, [&](int r) {
    const auto options = test::tiny_options(hw::OptimizerKind::Adam, job);
    auto& world = *group[static_cast<std::size_t>(r)];
    auto first = std::make_unique<hw::HwBackend>(test::tiny_model(), test::kTinySeq, 3, from,
                                                 options, world);
    for (int i = 0; i < 3; ++i) first->step(from);
    first->apply({core::SnapshotDirective{3}, "test", 0});
    if (live) {
      first->apply({core::ReplanDirective{to}, "test", 0});
    } else {
      first.reset();
      first = std::make_unique<hw::HwBackend>(test::tiny_model(), test::kTinySeq, 3, to, options,
                                              world);
      first->apply({core::RestoreDirective{3}, "test", 0});
      CHECK(first->iterations_done() == 3);
      if (r == 0 && stats != nullptr) *stats = first->last_restore();
    }
    for (int i = 3; i < 6; ++i) {
      first->step(to);
      if (r == 0) losses.push_back(first->last_loss());
    }
    first->remove_snapshots();
  });
  return losses;
}

const core::ParallelPlan pp2 = test::tiny_plan(1, 2, 1), pp1 = test::tiny_plan(1, 1, 1);

// pp2 on two hosts (ranks_per_node 1), SGD, `versions` iterations, each
// after a snapshot v1, v2, ...: rank 0 holds layers 0-1 and the replica of
// rank 1's shard (layers 2-3), rank 1 the other way round. The job's options.
hw::HwOptions pp2_on_two_hosts(const std::string& job, int versions) {
  auto options = test::tiny_options(hw::OptimizerKind::Sgd, job);
  options.ranks_per_node = 1;
  auto group = hw::make_thread_group(2);
  test::run_ranks(2, [&](int r) {
    hw::HwBackend run(test::tiny_model(), test::kTinySeq, 3, pp2, options,
                      *group[static_cast<std::size_t>(r)]);
    for (long long v = 1; v <= versions; ++v) {
      run.step(pp2);
      run.apply({core::SnapshotDirective{v}, "test", 0});
    }
  });
  return options;
}

}  // namespace

TEST_CASE("a snapshot restored under another plan trains on as a live re-plan to it") {
  // A live re-plan and a resharding restore both put every layer's weights
  // and Adam moments together whole and cut the new plan's shards out of
  // them: the same bits in the same places, so iterations 3-5 give the same
  // losses bit for bit. Both ways: tp2 pp2 (whole moments on replica 0)
  // into dp4 with the distributed optimizer (each rank a quarter of every
  // moment), and back (the moments put together from four dp shards). A
  // moment lost or misplaced on the way changes iteration 3's update.
  const auto a = test::tiny_plan(2, 2, 1), b = sharded(test::tiny_plan(1, 1, 4));
  for (const auto& way : {std::pair{a, b}, std::pair{b, a}}) {
    const core::ParallelPlan& from = way.first;
    const core::ParallelPlan& to = way.second;
    CAPTURE(from.label());
    const auto live = after_switch(from, to, true, "reshard-live");
    hw::RestoreStats stats;
    const auto restored = after_switch(from, to, false, "reshard-restore", &stats);
    REQUIRE(live.size() == 3);
    CHECK(restored == live);
    CHECK(stats.resharded);
    CHECK(stats.version == 3);
    // One node (ranks_per_node 0): no replicas, every shard the rank's own.
    CHECK(stats.shards_fetched == 0);
    CHECK(stats.bytes_fetched > 0);
  }
}

TEST_CASE("a resharding restore with a layer on no surviving host names the layer") {
  // pp2 on two hosts (pp2_on_two_hosts), one snapshot. Host 1 is lost and so is host 0's replica:
  // one rank restoring pp1 finds layers 0-1 only.
  const auto options = pp2_on_two_hosts("reshard-lost", 1);
  const auto job_dir = hw::ShardStore::job_dir(options.shm_root, options.job);
  std::filesystem::remove_all(job_dir / "node1");
  auto group = hw::make_thread_group(1);
  hw::HwBackend alone(test::tiny_model(), test::kTinySeq, 3, pp1, options, *group[0]);
  {
    // With the replica still there, the whole model is on host 0.
    hw::HwBackend whole(test::tiny_model(), test::kTinySeq, 3, pp1, options, *group[0]);
    whole.apply({core::RestoreDirective{1}, "test", 0});
    CHECK(whole.last_restore().resharded);
    CHECK(whole.last_restore().shards_fetched == 1);  // rank 1's, from its replica
    CHECK(whole.iterations_done() == 1);
  }
  std::filesystem::remove(
      hw::ShardStore(options.shm_root, options.job, 0).path_of(1, 1, hw::ShardKind::Replica));
  const std::string expected = "restore of snapshot version 1 under " + pp1.label() + " from " +
                               pp2.label() + ": part of layer 2's weights is on no rank";
  CHECK_THROWS_WITH_AS(alone.apply({core::RestoreDirective{1}, "test", 0}),
                       doctest::Contains(expected.c_str()), hw::HwError);
  std::filesystem::remove_all(job_dir);
}

TEST_CASE("a relaunch on another plan finds the newest version complete on the surviving hosts") {
  // pp2 on two hosts (ranks_per_node 1) snapshots v1 and v2 (two versions
  // kept per rank); host 1 is lost. Host 0 holds rank 0's shards and the
  // replicas of rank 1's, so one rank under pp1 there can restore v2
  // resharded; without v2's replica, v1; without v1's either, nothing. Its
  // own plan has no version at all.
  const auto options = pp2_on_two_hosts("reshard-newest", 2);
  const auto job_dir = hw::ShardStore::job_dir(options.shm_root, options.job);
  std::filesystem::remove_all(job_dir / "node1");
  const hw::ShardStore host0(options.shm_root, options.job, 0);
  auto group = hw::make_thread_group(1);
  hw::HwBackend alone(test::tiny_model(), test::kTinySeq, 3, pp1, options, *group[0]);
  CHECK_FALSE(alone.newest_restorable_snapshot());
  CHECK(alone.newest_resharded_snapshot() == 2);
  std::filesystem::remove(host0.path_of(1, 2, hw::ShardKind::Replica));
  CHECK(alone.newest_resharded_snapshot() == 1);
  std::filesystem::remove(host0.path_of(1, 1, hw::ShardKind::Replica));
  CHECK_FALSE(alone.newest_resharded_snapshot());
  std::filesystem::remove_all(job_dir);
}
