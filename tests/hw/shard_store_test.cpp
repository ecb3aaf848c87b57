#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "hw/snapshot/byte_stream.hpp"
#include "hw/snapshot/shard_store.hpp"

using namespace parashift;
namespace fs = std::filesystem;

namespace {

struct TempRoot {
  fs::path path =
      fs::temp_directory_path() / ("parashift-store-test-" + std::to_string(::getpid()));
  ~TempRoot() { fs::remove_all(path); }
};

std::vector<std::byte> bytes_of(std::initializer_list<int> values) {
  std::vector<std::byte> out;
  for (int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

}  // namespace

TEST_CASE("shards round-trip by job, node, rank and version; old versions are pruned") {
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
