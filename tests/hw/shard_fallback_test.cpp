// A snapshot shard the store refuses is restored from its peer's replica.
// Four ranks (pp 2 x dp 2) on two "nodes" of two ranks: rank 0's replica
// lives with rank 2 on node 1 (buddy = rank + ranks per node). Snapshot v1
// before iteration 1 and v2 before iteration 2; before iteration 4 rank 0's
// own v2 shard is replaced by a file the store must refuse (another job's,
// rank's, version's or plan's shard with a valid hash, a truncated or a
// tampered one), then the job restores its newest restorable version. Each
// case must restore v2 from the replica (one shard fetched), name the
// refused file and why, re-protect rank 0's shard on its node, and train on
// to the losses of the same run with nothing damaged, bit for bit.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "hw/comm/thread_communicator.hpp"
#include "hw/exec/hw_backend.hpp"
#include "hw/hw_error.hpp"
#include "hw/snapshot/shard_store.hpp"
#include "tests/hw/group_training.hpp"

using namespace parashift;
namespace fs = std::filesystem;

namespace {

constexpr int kRanksPerNode = 2;
constexpr int kIterations = 6;

/// Damages files of the job's snapshot: `store` is node 0's (the run's job
/// and plan), `root` the snapshot root, `job` the job's directory name.
using Damage =
    std::function<void(const hw::ShardStore& store, const fs::path& root, const std::string& job)>;

struct Outcome {
  std::vector<double> losses;                       // rank 0's
  std::optional<long long> restorable;              // what newest_restorable_snapshot() said
  hw::RestoreStats restore;                         // rank 0's
  std::optional<std::vector<std::byte>> own_after;  // rank 0's v2 shard after the restore
};

Outcome run(const std::string& job, const Damage& damage) {
  const auto plan = test::tiny_plan(1, 2, 2);
  test::Group group = hw::make_thread_group(plan.gpus());
  Outcome out;
  test::run_ranks(plan.gpus(), [&](int rank) {
    auto& world = *group[static_cast<std::size_t>(rank)];
    auto options = test::tiny_options(hw::OptimizerKind::Adam, job);
    options.ranks_per_node = kRanksPerNode;
    hw::HwBackend backend(test::tiny_model(), test::kTinySeq, 3, plan, options, world);
    const hw::ShardStore node0(options.shm_root, options.job, 0, plan.label());
    for (int i = 0; i < kIterations; ++i) {
      if (i == 1 || i == 2) backend.apply({core::SnapshotDirective{i}, "test", 0});
      if (i == 4) {
        if (rank == 0 && damage) damage(node0, options.shm_root, options.job);
        world.barrier();  // no rank looks at a shard before the damage is done
        const auto version = backend.newest_restorable_snapshot();
        if (rank == 0) out.restorable = version;
        REQUIRE(version.has_value());
        backend.apply({core::RestoreDirective{*version}, "test", 0});
        if (rank == 0) {
          out.restore = backend.last_restore();
          out.own_after = node0.read(0, 2, hw::ShardKind::Own);
        }
      }
      backend.step(plan);
      if (rank == 0) out.losses.push_back(backend.last_loss());
    }
    backend.remove_snapshots();
  });
  return out;
}

fs::path own_v2(const hw::ShardStore& store) {
  return store.path_of(0, 2, hw::ShardKind::Own);
}

/// The payload's last byte with its low bit flipped: the file's hash no longer matches.
void flip_last_byte(const fs::path& p) {
  std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(-1, std::ios::end);
  const char last = static_cast<char>(f.get());
  f.seekp(-1, std::ios::end);
  f.put(static_cast<char>(last ^ 0x01));
}

std::vector<std::byte> some_payload() {
  return std::vector<std::byte>(64, std::byte{7});
}

}  // namespace

TEST_CASE("a refused own shard is restored from its peer's replica") {
  const Outcome reference = run("fallback-ref", {});
  // Nothing damaged: v2 restored from every rank's own shard, nothing fetched.
  REQUIRE(reference.restorable == 2);
  CHECK(reference.restore.shards_fetched == 0);
  CHECK(reference.restore.refused.empty());
  REQUIRE(reference.losses.size() == kIterations);

  struct Case {
    const char* what;
    Damage damage;
    std::string reason;  // the end of the refusal line
  };
  const std::string plan_label = test::tiny_plan(1, 2, 2).label();
  const std::vector<Case> cases{
      {"another job's valid shard under this name",
       [&](const hw::ShardStore& s, const fs::path& root, const std::string&) {
         const hw::ShardStore other(root, "other-job", 0, plan_label);
         other.write(0, 2, hw::ShardKind::Own, some_payload());
         fs::copy_file(other.path_of(0, 2, hw::ShardKind::Own), own_v2(s),
                       fs::copy_options::overwrite_existing);
         fs::remove_all(hw::ShardStore::job_dir(root, "other-job"));
       },
       "written by job 'other-job', not '"},
      {"rank 1's shard of the same version",
       [](const hw::ShardStore& s, const fs::path&, const std::string&) {
         fs::copy_file(s.path_of(1, 2, hw::ShardKind::Own), own_v2(s),
                       fs::copy_options::overwrite_existing);
       },
       "written for rank 1, not 0"},
      {"rank 0's v1 shard renamed to v2",
       [](const hw::ShardStore& s, const fs::path&, const std::string&) {
         fs::copy_file(s.path_of(0, 1, hw::ShardKind::Own), own_v2(s),
                       fs::copy_options::overwrite_existing);
       },
       "holds version 1, not 2"},
      {"the same job's shard under another plan",
       [](const hw::ShardStore&, const fs::path& root, const std::string& job) {
         const hw::ShardStore other(root, job, 0, "tp2-pp1-dp2");
         other.write(0, 2, hw::ShardKind::Own, some_payload());  // over rank 0's v2
       },
       "written under plan 'tp2-pp1-dp2', not '" + plan_label + "'"},
      {"a truncated shard",
       [](const hw::ShardStore& s, const fs::path&, const std::string&) {
         fs::resize_file(own_v2(s), fs::file_size(own_v2(s)) - 1);
       },
       "payload bytes"},
      {"a tampered byte",
       [](const hw::ShardStore& s, const fs::path&, const std::string&) {
         flip_last_byte(own_v2(s));
       },
       "content hash (SHA-256) mismatch: corrupted or tampered"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    const Outcome got = run("fallback", c.damage);
    CHECK(got.restorable == 2);  // the replica still makes v2 whole
    CHECK(got.restore.version == 2);
    CHECK(got.restore.shards_fetched == 1);    // rank 0's, from rank 2's replica
    REQUIRE(got.restore.refused.size() == 1);  // nothing else was touched
    const std::string& line = got.restore.refused.front();
    CHECK(line.find("node0/r0-v2.shard: ") != std::string::npos);
    CHECK(line.find(c.reason) != std::string::npos);
    CHECK(got.own_after.has_value());       // the fetched copy protects rank 0 again
    CHECK(got.losses == reference.losses);  // restored state is the undamaged one
  }
}

TEST_CASE("a version refused on both sides falls back to an older one") {
  // Rank 0's own v2 shard and its replica on node 1 both tampered: v2 is
  // restorable for no one, so the job restores v1 (every rank has it), as
  // the undamaged run restoring v1 does.
  const Outcome got =
      run("fallback-both", [](const hw::ShardStore& s, const fs::path&, const std::string&) {
        flip_last_byte(own_v2(s));
        flip_last_byte(s.node_dir().parent_path() / "node1" / "r0-v2.replica");
      });
  CHECK(got.restorable == 1);
  CHECK(got.restore.version == 1);
  CHECK(got.restore.shards_fetched == 0);
  // Rank 0 refused its own shard, rank 2 its replica: both on rank 0's list, in rank order.
  REQUIRE(got.restore.refused.size() == 2);
  CHECK(got.restore.refused[0].find("node0/r0-v2.shard: content hash") != std::string::npos);
  CHECK(got.restore.refused[1].find("node1/r0-v2.replica: content hash") != std::string::npos);
  // The losses after restoring v1 before iteration 4: iterations 4 and 5
  // repeat iterations 1 and 2 of the same run.
  REQUIRE(got.losses.size() == kIterations);
  CHECK(got.losses[4] == got.losses[1]);
  CHECK(got.losses[5] == got.losses[2]);
}
