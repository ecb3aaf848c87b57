#include "hw/snapshot/shard_store.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <regex>

#include <unistd.h>

#include "hw/hw_error.hpp"

namespace parashift::hw {

namespace fs = std::filesystem;

namespace {

constexpr std::array<char, 8> kMagic{'P', 'S', 'H', 'A', 'R', 'D', '0', '1'};

struct Header {
  std::array<char, 8> magic = kMagic;
  std::int64_t version = 0;
  std::uint64_t payload_bytes = 0;
  std::uint64_t checksum = 0;
};

std::uint64_t fnv1a(std::span<const std::byte> bytes) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (std::byte b : bytes) {
    h ^= static_cast<std::uint64_t>(b);
    h *= 0x100000001b3ULL;
  }
  return h;
}

const char* suffix(ShardKind kind) {
  return kind == ShardKind::Own ? ".shard" : ".replica";
}

}  // namespace

ShardStore::ShardStore(fs::path root, std::string job, int node)
    : dir_(job_dir(root, job) / ("node" + std::to_string(node))) {}

fs::path ShardStore::job_dir(const fs::path& root, const std::string& job) {
  return root / ("parashift-" + job);
}

fs::path ShardStore::path_of(int rank, long long version, ShardKind kind) const {
  return dir_ / ("r" + std::to_string(rank) + "-v" + std::to_string(version) + suffix(kind));
}

void ShardStore::write(int rank, long long version, ShardKind kind,
                       std::span<const std::byte> payload) const {
  std::error_code ec;
  fs::create_directories(dir_, ec);  // on first write: a job that never snapshots leaves nothing
  if (ec) throw HwError("cannot create snapshot directory " + dir_.string() + ": " + ec.message());
  const fs::path target = path_of(rank, version, kind);
  const fs::path temp = target.string() + ".tmp" + std::to_string(::getpid());
  Header header;
  header.version = version;
  header.payload_bytes = payload.size();
  header.checksum = fnv1a(payload);
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(&header), sizeof header);  // POD header
    out.write(reinterpret_cast<const char*>(payload.data()),
              static_cast<std::streamsize>(payload.size()));
    if (!out) throw HwError("cannot write snapshot shard " + temp.string());
  }
  fs::rename(temp, target, ec);
  if (ec) throw HwError("cannot rename " + temp.string() + ": " + ec.message());
}

std::optional<std::vector<std::byte>> ShardStore::read(int rank, long long version,
                                                       ShardKind kind) const {
  std::ifstream in(path_of(rank, version, kind), std::ios::binary);
  if (!in) return std::nullopt;
  Header header;
  in.read(reinterpret_cast<char*>(&header), sizeof header);
  if (!in || header.magic != kMagic || header.version != version) return std::nullopt;
  std::vector<std::byte> payload(header.payload_bytes);
  in.read(reinterpret_cast<char*>(payload.data()), static_cast<std::streamsize>(payload.size()));
  if (!in || fnv1a(payload) != header.checksum) return std::nullopt;
  return payload;
}

std::vector<long long> ShardStore::versions(int rank, ShardKind kind) const {
  const std::regex pattern("r" + std::to_string(rank) + "-v([0-9]+)\\" + suffix(kind));
  std::vector<long long> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    std::smatch m;
    const std::string name = entry.path().filename().string();
    if (std::regex_match(name, m, pattern)) out.push_back(std::stoll(m[1].str()));
  }
  std::sort(out.rbegin(), out.rend());
  return out;
}

void ShardStore::prune(int rank, ShardKind kind, int keep) const {
  const auto all = versions(rank, kind);
  for (std::size_t i = static_cast<std::size_t>(std::max(keep, 0)); i < all.size(); ++i) {
    std::error_code ec;
    fs::remove(path_of(rank, all[i], kind), ec);
  }
}

std::optional<long long> newest_common_version(
    const std::vector<std::vector<long long>>& available) {
  if (available.empty()) return std::nullopt;
  std::vector<long long> candidates = available.front();
  std::sort(candidates.rbegin(), candidates.rend());
  for (long long v : candidates) {
    const bool everywhere = std::all_of(available.begin(), available.end(), [v](const auto& list) {
      return std::find(list.begin(), list.end(), v) != list.end();
    });
    if (everywhere) return v;
  }
  return std::nullopt;
}

}  // namespace parashift::hw
