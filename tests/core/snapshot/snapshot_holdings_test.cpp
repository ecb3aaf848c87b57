// core::choose_version: which version recovery restores from what survived.
#include <doctest/doctest.h>

#include "core/snapshot/snapshot_holdings.hpp"

using namespace parashift::core;

namespace {

// Two ranks on hosts with memories 0 and 1; each version committed to the
// other host's memory, except v300, still replicating (owners only).
//   v100: rank 0 on {0, 1}, rank 1 on {1, 0}   (committed)
//   v200: rank 0 on {0, 1}, rank 1 on {1, 0}   (committed)
//   v300: rank 0 on {0},    rank 1 on {1}
SnapshotHoldings two_hosts() {
  SnapshotHoldings h;
  for (long long v : {100, 200}) {
    h.replicas.add(0, v, {0, 1});
    h.replicas.add(1, v, {1, 0});
  }
  h.replicas.add(0, 300, {0});
  h.replicas.add(1, 300, {1});
  h.committed = 200;
  h.remote = 0;
  return h;
}

}  // namespace

TEST_CASE("the newest version is restored while every shard of it survives") {
  const auto choice = choose_version(two_hosts());
  REQUIRE(choice);
  CHECK(choice->version == 300);
  CHECK_FALSE(choice->from_remote);
  CHECK_FALSE(choice->lost);
  CHECK(describe_loss(*choice).empty());
}

TEST_CASE("a version still replicating falls back to the committed one, which is no loss") {
  // Memory 0 died: v300's rank 0 had its only copy there; v200's rank 0
  // is still on memory 1.
  SnapshotHoldings h = two_hosts();
  h.dead_holders = {0};
  const auto choice = choose_version(h);
  REQUIRE(choice);
  CHECK(choice->version == 200);
  CHECK_FALSE(choice->lost);
}

TEST_CASE("every copy of a committed version gone: the remote checkpoint, a state loss") {
  // Both memories died: no version is whole; the remote holds v0.
  SnapshotHoldings h = two_hosts();
  h.dead_holders = {0, 1};
  auto choice = choose_version(h);
  REQUIRE(choice);
  CHECK(choice->version == 0);
  CHECK(choice->from_remote);
  REQUIRE(choice->lost);
  CHECK(*choice->lost == 200);
  CHECK(choice->shards_missing == std::vector<int>{0, 1});
  CHECK(describe_loss(*choice) ==
        "v200 lost: no surviving host memory holds the shards of ranks 0, 1");
  // No remote checkpoint either: nothing to restore.
  h.remote.reset();
  CHECK_FALSE(choose_version(h));
}

TEST_CASE("the remote checkpoint wins where it is newer than every whole version") {
  // Only v100 of rank 1 survives elsewhere: say v200's and v300's rank 1
  // copies died with memory 1 and a memory 2 that held v100 survives.
  SnapshotHoldings h;
  h.replicas.add(0, 100, {0});
  h.replicas.add(1, 100, {2});
  h.replicas.add(0, 200, {0});
  h.replicas.add(1, 200, {1});
  h.committed = 200;
  h.dead_holders = {1};
  h.remote = 150;
  const auto choice = choose_version(h);
  REQUIRE(choice);
  // v100 is whole, the remote v150 newer: restore v150 from remote.
  CHECK(choice->version == 150);
  CHECK(choice->from_remote);
  CHECK(choice->lost == 200);
  CHECK(describe_loss(*choice) == "v200 lost: no surviving host memory holds rank 1's shard");
  // Without the remote copy the older whole version is restored.
  h.remote.reset();
  const auto older = choose_version(h);
  REQUIRE(older);
  CHECK(older->version == 100);
  CHECK_FALSE(older->from_remote);
}

TEST_CASE("each version is judged on its own shards: a shrunk plan's version has fewer ranks") {
  // v100 of a 3-rank plan; v200 after a shrink to 2 ranks lists ranks 0, 1.
  SnapshotHoldings h;
  for (int r = 0; r < 3; ++r) h.replicas.add(r, 100, {r});
  h.replicas.add(0, 200, {0});
  h.replicas.add(1, 200, {1});
  h.committed = 200;
  const auto choice = choose_version(h);
  REQUIRE(choice);
  CHECK(choice->version == 200);
}
