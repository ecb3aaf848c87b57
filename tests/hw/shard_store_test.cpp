#include <doctest/doctest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "hw/hw_error.hpp"
#include "hw/snapshot/byte_stream.hpp"
#include "hw/snapshot/shard_store.hpp"
#include "tests/temp_dir.hpp"

using namespace parashift;
namespace fs = std::filesystem;

namespace {

struct TempRoot {
  test::TempDir dir{"parashift-store-test"};
  fs::path path = dir.path();
};

int mode_of(const fs::path& p) {
  struct stat st {};
  REQUIRE(::stat(p.c_str(), &st) == 0);
  return static_cast<int>(st.st_mode & 0777);
}

std::vector<char> file_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::byte> bytes_of(std::initializer_list<int> values) {
  std::vector<std::byte> out;
  for (int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

}  // namespace

TEST_CASE("shards round-trip by job, node, rank and version, old versions are pruned") {
  TempRoot root;
  const hw::ShardStore store(root.path, "job1", 1);
  CHECK(store.node_dir() == root.path / "parashift-job1" / "node1");
  store.write(3, 2, hw::ShardKind::Own, bytes_of({1, 2, 3}));
  store.write(3, 4, hw::ShardKind::Own, bytes_of({4, 5}));
  store.write(3, 6, hw::ShardKind::Own, bytes_of({6}));
  store.write(2, 6, hw::ShardKind::Replica, bytes_of({9}));
  CHECK(fs::exists(store.node_dir() / "r3-v4.shard"));
  CHECK(store.read(3, 4, hw::ShardKind::Own) == bytes_of({4, 5}));
  CHECK(store.versions(3, hw::ShardKind::Own) == std::vector<long long>{6, 4, 2});
  CHECK(store.versions(2, hw::ShardKind::Replica) == std::vector<long long>{6});
  CHECK_FALSE(store.read(3, 6, hw::ShardKind::Replica).has_value());
  store.prune(3, hw::ShardKind::Own, 2);
  CHECK(store.versions(3, hw::ShardKind::Own) == std::vector<long long>{6, 4});
}

TEST_CASE("a torn or corrupted shard reads as missing") {
  TempRoot root;
  const hw::ShardStore store(root.path, "job2", 0);
  store.write(0, 1, hw::ShardKind::Own, bytes_of({1, 2, 3, 4}));
  store.write(0, 2, hw::ShardKind::Own, bytes_of({1, 2, 3, 4}));
  const auto torn = store.path_of(0, 1, hw::ShardKind::Own);
  fs::resize_file(torn, fs::file_size(torn) - 1);
  CHECK_FALSE(store.read(0, 1, hw::ShardKind::Own).has_value());
  {
    std::fstream f(store.path_of(0, 2, hw::ShardKind::Own),
                   std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-1, std::ios::end);
    f.put('\x7f');  // payload byte 4 -> 127: the checksum no longer matches
  }
  CHECK_FALSE(store.read(0, 2, hw::ShardKind::Own).has_value());
  CHECK(store.inspect(0, 1, hw::ShardKind::Own).refused == "truncated: 3 of 4 payload bytes");
  CHECK(store.inspect(0, 2, hw::ShardKind::Own).refused ==
        "content hash (SHA-256) mismatch: corrupted or tampered");
  CHECK(store.inspect(0, 3, hw::ShardKind::Own).refused == "missing");
}

TEST_CASE("shards are owner-only: files 0600 in job and node directories 0700") {
  TempRoot root;
  const hw::ShardStore store(root.path, "job3", 0, "tp1-pp2-dp1");
  store.write(0, 1, hw::ShardKind::Own, bytes_of({1}));
  CHECK(mode_of(store.path_of(0, 1, hw::ShardKind::Own)) == 0600);
  CHECK(mode_of(store.node_dir()) == 0700);
  CHECK(mode_of(hw::ShardStore::job_dir(root.path, "job3")) == 0700);
  // A job directory left open to others (an older run, a wide umask) is closed again.
  fs::permissions(store.node_dir(), fs::perms::all);
  store.write(0, 2, hw::ShardKind::Own, bytes_of({2}));
  CHECK(mode_of(store.node_dir()) == 0700);
}

TEST_CASE("a shard of another job, rank, version, kind or plan is refused") {
  TempRoot root;
  const hw::ShardStore mine(root.path, "jobA", 0, "tp1-pp2-dp1");
  const auto own = [&](int rank, long long version) {
    return mine.path_of(rank, version, hw::ShardKind::Own);
  };
  // Another job's valid shard (its hash matches), copied under this job's name.
  const hw::ShardStore other_job(root.path, "jobB", 0, "tp1-pp2-dp1");
  other_job.write(0, 5, hw::ShardKind::Own, bytes_of({7, 7}));
  fs::create_directories(mine.node_dir());
  fs::copy_file(other_job.path_of(0, 5, hw::ShardKind::Own), own(0, 5));
  CHECK_FALSE(mine.read(0, 5, hw::ShardKind::Own).has_value());
  CHECK(mine.inspect(0, 5, hw::ShardKind::Own).refused == "written by job 'jobB', not 'jobA'");
  // The same job under another plan (tp2 instead of tp1).
  const hw::ShardStore other_plan(root.path, "jobA", 0, "tp2-pp1-dp1");
  other_plan.write(0, 6, hw::ShardKind::Own, bytes_of({1}));
  CHECK(mine.inspect(0, 6, hw::ShardKind::Own).refused ==
        "written under plan 'tp2-pp1-dp1', not 'tp1-pp2-dp1'");
  CHECK(other_plan.read(0, 6, hw::ShardKind::Own) == bytes_of({1}));
  // The refusal names the plan the header holds (a resharding restore reads
  // the shard under it).
  CHECK(mine.inspect(0, 6, hw::ShardKind::Own).plan == "tp2-pp1-dp1");
  // Rank 1's shard renamed to rank 0's; version 7 renamed to version 8.
  mine.write(1, 7, hw::ShardKind::Own, bytes_of({3}));
  fs::copy_file(own(1, 7), own(0, 7));
  CHECK(mine.inspect(0, 7, hw::ShardKind::Own).refused == "written for rank 1, not 0");
  fs::copy_file(own(1, 7), own(1, 8));
  CHECK(mine.inspect(1, 8, hw::ShardKind::Own).refused == "holds version 7, not 8");
  // A replica put where the own shard belongs.
  mine.write(1, 9, hw::ShardKind::Replica, bytes_of({4}));
  fs::copy_file(mine.path_of(1, 9, hw::ShardKind::Replica), own(1, 9));
  CHECK(mine.inspect(1, 9, hw::ShardKind::Own).refused == "is a replica under another kind's name");
  CHECK(mine.read(1, 9, hw::ShardKind::Replica) == bytes_of({4}));
  // The ranks with a file of a version and kind, by name: 0 and 1 of v7
  // (rank 1's copied to rank 0's name), rank 1's replica of v9, none of v3.
  CHECK(mine.ranks_of(7, hw::ShardKind::Own) == std::vector<int>{0, 1});
  CHECK(mine.ranks_of(9, hw::ShardKind::Replica) == std::vector<int>{1});
  CHECK(mine.ranks_of(3, hw::ShardKind::Own).empty());
}

TEST_CASE("a tampered header, extra bytes or a foreign file is refused") {
  TempRoot root;
  const hw::ShardStore store(root.path, "job4", 0, "p");
  store.write(0, 1, hw::ShardKind::Own, bytes_of({1, 2}));
  const auto path = store.path_of(0, 1, hw::ShardKind::Own);
  const std::vector<char> good = file_bytes(path);
  {
    // The job name's first letter, 'j' at offset 16 (8 magic + 8 length), becomes 'k':
    // the header is hashed with the payload, so the hash no longer matches.
    std::vector<char> bad = good;
    bad[16] = 'k';
    std::ofstream(path, std::ios::binary | std::ios::trunc).write(bad.data(), std::ssize(bad));
  }
  CHECK(store.inspect(0, 1, hw::ShardKind::Own).refused ==
        "content hash (SHA-256) mismatch: corrupted or tampered");
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(good.data(), std::ssize(good));
    out.put('x');
  }
  CHECK(store.inspect(0, 1, hw::ShardKind::Own).refused == "1 trailing bytes after the payload");
  std::ofstream(path, std::ios::binary | std::ios::trunc) << "PSHARD01 an old-format shard";
  CHECK(store.inspect(0, 1, hw::ShardKind::Own).refused ==
        "not a parashift shard of this format (magic PSHARD02)");
  std::ofstream(path, std::ios::binary | std::ios::trunc) << "PSHARD02";
  CHECK(store.inspect(0, 1, hw::ShardKind::Own).refused == "truncated header");
}

TEST_CASE("a job directory that is a link or another user's is not written into") {
  TempRoot root;
  fs::create_directories(root.path / "elsewhere");
  fs::create_directory_symlink(root.path / "elsewhere", root.path / "parashift-job5");
  const hw::ShardStore store(root.path, "job5", 0);
  CHECK_THROWS_AS(store.write(0, 1, hw::ShardKind::Own, bytes_of({1})), hw::HwError);
  CHECK(fs::is_empty(root.path / "elsewhere"));
}

TEST_CASE("the newest version every rank can restore") {
  // Rank 1 lost version 6 (its node died mid-snapshot): 4 is the newest complete one.
  CHECK(hw::newest_common_version({{6, 4, 2}, {4, 2}, {6, 4}}) == 4);
  CHECK(hw::newest_common_version({{6}, {4}}) == std::nullopt);
  CHECK(hw::newest_common_version({}) == std::nullopt);
}

TEST_CASE("byte streams read back what was written and refuse other shapes") {
  hw::ByteWriter out;
  out.i64(-5);
  out.ints({1, 2, 3});
  hw::Matrix m(2, 3);
  m << 1, 2, 3, 4, 5, 6;
  out.matrix(m);
  hw::ByteReader in(out.bytes());
  CHECK(in.i64() == -5);
  CHECK(in.ints() == std::vector<int>{1, 2, 3});
  hw::Matrix back(2, 3);
  in.matrix(back);
  CHECK(back == m);
  CHECK(in.done());
  hw::ByteReader again(out.bytes());
  again.i64();
  again.ints();
  hw::Matrix wrong(3, 2);
  CHECK_THROWS(again.matrix(wrong));
}
