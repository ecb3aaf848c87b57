#include <doctest/doctest.h>

#include <set>
#include <stdexcept>

#include "core/snapshot/recovery_plan.hpp"
#include "core/snapshot/replica_map.hpp"

using namespace parashift::core;

namespace {

// shard 0: v1 on hosts {10, 11}; v2 only on 10 (not yet replicated).
// shard 1: v1 on {20, 21}; v2 on {20, 21}.
ReplicaMap hand_built() {
  ReplicaMap map;
  map.add(0, 1, {10, 11});
  map.add(0, 2, {10});
  map.add(1, 1, {20, 21});
  map.add(1, 2, {20, 21});
  return map;
}

}  // namespace

TEST_CASE("a shard lacks a version only when every holder of it died") {
  // Nothing dead: both shards hold v2. Host 21 gone: shard 1 keeps v2 on 20.
  CHECK(shards_without_replica(hand_built(), 2, {}).empty());
  CHECK(shards_without_replica(hand_built(), 2, {21}).empty());
  // Host 10 gone: shard 0's only v2 replica died; its v1 survives on 11.
  CHECK(shards_without_replica(hand_built(), 2, {10}) == std::vector<int>{0});
  CHECK(shards_without_replica(hand_built(), 1, {10}).empty());
  // Hosts 10 and 11 gone: no version of shard 0 is left.
  CHECK(shards_without_replica(hand_built(), 1, {10, 11}) == std::vector<int>{0});
  CHECK(hand_built().versions() == std::set<long long>{1, 2});
}

TEST_CASE("a version a shard never had counts that shard as lacking it") {
  ReplicaMap map = hand_built();
  map.add(2, 1, {30});  // shard 2 has no v2 at all
  CHECK(shards_without_replica(map, 2, {}) == std::vector<int>{2});
  CHECK(shards_without_replica(map, 1, {}).empty());
}

TEST_CASE("a restore that moves a shard of a rank that was not lost breaks the invariant") {
  RecoveryPlan plan;
  plan.moves.push_back(ShardMove{3, ShardKind::Parameters, 7, 1, 40, 1e9});
  plan.moves.push_back(ShardMove{5, ShardKind::Optimizer, 7, 2, 41, 1e9});
  CHECK_THROWS_AS(check_moves_only_lost(plan, {3}), std::logic_error);
  CHECK_NOTHROW(check_moves_only_lost(plan, {3, 5}));
  // Remap directives per rank, then the restore.
  plan.remaps.push_back(Placement{3, 1, 40, Nearness::SameRack});
  const auto directives = plan.directives();
  REQUIRE(directives.size() == 2);
  CHECK(std::string(kind_name(directives[0].action)) ==
        kind_name(DirectiveAction{RemapDirective{}}));
  CHECK(plan.moved_bytes() == doctest::Approx(2e9));
}
