#include "hw/snapshot/shard_store.hpp"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include "core/snapshot/snapshot_holdings.hpp"
#include "hw/hw_error.hpp"

namespace parashift::hw {

namespace fs = std::filesystem;

namespace {

constexpr std::array<char, 8> kMagic{'P', 'S', 'H', 'A', 'R', 'D', '0', '2'};
constexpr std::size_t kHashBytes = 32;         // SHA-256
constexpr std::uint64_t kMaxNameBytes = 4096;  // job and plan names in a header

using Hash = std::array<unsigned char, kHashBytes>;

/// SHA-256 over the header fields and the payload, with OpenSSL's EVP.
Hash sha256(std::span<const std::byte> header, std::span<const std::byte> payload) {
  const std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(),
                                                                    &EVP_MD_CTX_free);
  Hash out{};
  unsigned int size = 0;
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1 ||
      EVP_DigestUpdate(ctx.get(), header.data(), header.size()) != 1 ||
      EVP_DigestUpdate(ctx.get(), payload.data(), payload.size()) != 1 ||
      EVP_DigestFinal_ex(ctx.get(), out.data(), &size) != 1 || size != kHashBytes) {
    throw HwError("OpenSSL SHA-256 failed", "check the libssl3 installation");
  }
  return out;
}

void put_u64(std::vector<std::byte>& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xffU));
}

void put_string(std::vector<std::byte>& out, const std::string& s) {
  put_u64(out, s.size());
  for (char c : s) out.push_back(static_cast<std::byte>(c));
}

/// The header fields, before the hash: magic, job, rank, version, kind, plan, payload size.
std::vector<std::byte> header_fields(const std::string& job, int rank, long long version,
                                     ShardKind kind, const std::string& plan,
                                     std::size_t payload_bytes) {
  std::vector<std::byte> out;
  for (char c : kMagic) out.push_back(static_cast<std::byte>(c));
  put_string(out, job);
  put_u64(out, static_cast<std::uint64_t>(static_cast<std::int64_t>(rank)));
  put_u64(out, static_cast<std::uint64_t>(static_cast<std::int64_t>(version)));
  put_u64(out, kind == ShardKind::Own ? 0 : 1);
  put_string(out, plan);
  put_u64(out, payload_bytes);
  return out;
}

/// Reads header fields back; every read is bounded by the bytes there are.
class HeaderReader {
 public:
  explicit HeaderReader(std::span<const std::byte> bytes) : bytes_(bytes) {}
  bool u64(std::uint64_t& v) {
    if (bytes_.size() - at_ < 8) return false;
    v = 0;
    for (int i = 0; i < 8; ++i) {
      v |= static_cast<std::uint64_t>(bytes_[at_ + static_cast<std::size_t>(i)]) << (8 * i);
    }
    at_ += 8;
    return true;
  }
  bool i64(long long& v) {
    std::uint64_t u = 0;
    if (!u64(u)) return false;
    v = static_cast<long long>(static_cast<std::int64_t>(u));
    return true;
  }
  bool string(std::string& s) {
    std::uint64_t n = 0;
    if (!u64(n) || n > kMaxNameBytes || bytes_.size() - at_ < n) return false;
    s.assign(reinterpret_cast<const char*>(bytes_.data() + at_), static_cast<std::size_t>(n));
    at_ += static_cast<std::size_t>(n);
    return true;
  }
  bool skip(std::size_t n) {
    if (bytes_.size() - at_ < n) return false;
    at_ += n;
    return true;
  }
  std::size_t at() const { return at_; }

 private:
  std::span<const std::byte> bytes_;
  std::size_t at_ = 0;
};

const char* suffix(ShardKind kind) {
  return kind == ShardKind::Own ? ".shard" : ".replica";
}

/// Makes `dir` (0700) or checks the one there: a directory, not a link, of
/// this user; group and other access is taken away.
void ensure_private_dir(const fs::path& dir) {
  if (::mkdir(dir.c_str(), 0700) == 0) return;
  if (errno != EEXIST) {
    throw HwError("cannot create snapshot directory " + dir.string() + ": " + std::strerror(errno),
                  "check that the snapshot root exists and is writable");
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid()) {
    throw HwError("snapshot directory " + dir.string() +
                      " is not a directory of this user: its shards cannot be trusted",
                  "remove it, or give the job another name or snapshot root");
  }
  if ((st.st_mode & 077) != 0 && ::chmod(dir.c_str(), 0700) != 0) {
    throw HwError("cannot make snapshot directory " + dir.string() + " owner-only",
                  "remove it, or give the job another snapshot root");
  }
}

void write_all(int fd, std::span<const std::byte> bytes, const fs::path& path) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      throw HwError("cannot write snapshot shard " + path.string() + ": " + std::strerror(errno),
                    "check the space left on the snapshot root (df /dev/shm)");
    }
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace

ShardStore::ShardStore(fs::path root, std::string job, int node, std::string plan)
    : dir_(job_dir(root, job) / ("node" + std::to_string(node))),
      job_(std::move(job)),
      plan_(std::move(plan)) {}

fs::path ShardStore::job_dir(const fs::path& root, const std::string& job) {
  return root / ("parashift-" + job);
}

fs::path ShardStore::path_of(int rank, long long version, ShardKind kind) const {
  return dir_ / ("r" + std::to_string(rank) + "-v" + std::to_string(version) + suffix(kind));
}

void ShardStore::write(int rank, long long version, ShardKind kind,
                       std::span<const std::byte> payload) const {
  // On first write: a job that never snapshots leaves nothing.
  std::error_code ec;
  fs::create_directories(dir_.parent_path().parent_path(), ec);
  ensure_private_dir(dir_.parent_path());
  ensure_private_dir(dir_);
  const fs::path target = path_of(rank, version, kind);
  const fs::path temp = target.string() + ".tmp" + std::to_string(::getpid());
  const std::vector<std::byte> header =
      header_fields(job_, rank, version, kind, plan_, payload.size());
  const Hash hash = sha256(header, payload);
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    throw HwError("cannot create snapshot shard " + temp.string() + ": " + std::strerror(errno),
                  "check that the snapshot root is writable");
  }
  try {
    if (::fchmod(fd, 0600) != 0) throw HwError("cannot make " + temp.string() + " owner-only");
    write_all(fd, header, temp);
    write_all(fd, std::as_bytes(std::span(hash)), temp);
    write_all(fd, payload, temp);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  fs::rename(temp, target, ec);
  if (ec) throw HwError("cannot rename " + temp.string() + ": " + ec.message());
}

std::optional<std::vector<std::byte>> ShardStore::read(int rank, long long version,
                                                       ShardKind kind) const {
  return inspect(rank, version, kind).payload;
}

ShardRead ShardStore::inspect(int rank, long long version, ShardKind kind) const {
  const fs::path path = path_of(rank, version, kind);
  ShardRead result;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    result.refused = "missing";
    return result;
  }
  in.seekg(0, std::ios::end);
  std::vector<std::byte> file(static_cast<std::size_t>(std::max<std::streamoff>(in.tellg(), 0)));
  in.seekg(0, std::ios::beg);
  in.read(reinterpret_cast<char*>(file.data()), static_cast<std::streamsize>(file.size()));
  if (!in) {
    result.refused = "unreadable";
    return result;
  }
  HeaderReader h{std::span<const std::byte>(file)};
  std::string job, plan;
  long long shard_rank = 0, shard_version = 0, shard_kind = 0;
  std::uint64_t payload_bytes = 0;
  const bool magic = file.size() >= kMagic.size() &&
                     std::equal(kMagic.begin(), kMagic.end(), file.begin(),
                                [](char c, std::byte b) { return static_cast<std::byte>(c) == b; });
  if (!magic) {
    result.refused = "not a parashift shard of this format (magic PSHARD02)";
    return result;
  }
  h.skip(kMagic.size());
  if (!h.string(job) || !h.i64(shard_rank) || !h.i64(shard_version) || !h.i64(shard_kind) ||
      !h.string(plan) || !h.u64(payload_bytes)) {
    result.refused = "truncated header";
    return result;
  }
  const std::size_t header_end = h.at();
  if (!h.skip(kHashBytes)) {
    result.refused = "truncated header";
    return result;
  }
  const std::size_t have = file.size() - h.at();
  if (have < payload_bytes) {
    result.refused = "truncated: " + std::to_string(have) + " of " + std::to_string(payload_bytes) +
                     " payload bytes";
    return result;
  }
  if (have > payload_bytes) {
    result.refused = std::to_string(have - payload_bytes) + " trailing bytes after the payload";
    return result;
  }
  const std::span<const std::byte> all(file);
  const Hash stored = [&] {
    Hash out{};
    std::memcpy(out.data(), file.data() + header_end, kHashBytes);
    return out;
  }();
  const auto payload = all.subspan(h.at());
  if (sha256(all.first(header_end), payload) != stored) {
    result.refused = "content hash (SHA-256) mismatch: corrupted or tampered";
    return result;
  }
  const long long want_kind = kind == ShardKind::Own ? 0 : 1;
  result.plan = plan;
  if (job != job_) {
    result.refused = "written by job '" + job + "', not '" + job_ + "'";
  } else if (shard_rank != rank) {
    result.refused =
        "written for rank " + std::to_string(shard_rank) + ", not " + std::to_string(rank);
  } else if (shard_version != version) {
    result.refused =
        "holds version " + std::to_string(shard_version) + ", not " + std::to_string(version);
  } else if (shard_kind != want_kind) {
    result.refused = std::string("is a ") + (shard_kind == 0 ? "own shard" : "replica") +
                     " under another kind's name";
  } else if (plan != plan_) {
    result.refused = "written under plan '" + plan + "', not '" + plan_ + "'";
  } else {
    result.payload.emplace(payload.begin(), payload.end());
  }
  return result;
}

std::vector<long long> ShardStore::versions(int rank, ShardKind kind) const {
  std::vector<long long> out;
  for (const auto& [r, version] : entries(kind))
    if (r == rank) out.push_back(version);
  std::sort(out.rbegin(), out.rend());
  return out;
}

std::vector<std::pair<int, long long>> ShardStore::entries(ShardKind kind) const {
  // Names are "r<rank>-v<version><suffix>" (path_of; the rank written as
  // std::to_string does, without leading zeros). Matched by hand, not by
  // std::regex: constructing a regex reads the global locale's ctype cache,
  // which libstdc++ fills lazily and unsynchronised, a data race when two rank
  // threads list their shards at once (found by ThreadSanitizer).
  const std::string_view tail = suffix(kind);
  auto number = [](std::string_view digits, std::size_t most) {
    return !digits.empty() && digits.size() <= most &&
           std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  std::vector<std::pair<int, long long>> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= 1 + tail.size() || name[0] != 'r' || !name.ends_with(tail)) continue;
    const std::string_view body = std::string_view(name).substr(1, name.size() - 1 - tail.size());
    const std::size_t dash = body.find("-v");
    if (dash == std::string_view::npos || !number(body.substr(0, dash), 9) ||
        (dash > 1 && body[0] == '0') || !number(body.substr(dash + 2), 18))
      continue;
    out.emplace_back(std::stoi(std::string(body.substr(0, dash))),
                     std::stoll(std::string(body.substr(dash + 2))));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int> ShardStore::ranks_of(long long version, ShardKind kind) const {
  std::vector<int> out;
  for (const auto& [rank, v] : entries(kind))
    if (v == version) out.push_back(rank);
  return out;
}

std::vector<long long> ShardStore::trusted_versions(int rank, ShardKind kind,
                                                    std::vector<std::string>* refused) const {
  std::vector<long long> out;
  for (long long v : versions(rank, kind)) {
    const ShardRead r = inspect(rank, v, kind);
    if (r.payload) {
      out.push_back(v);
    } else if (refused != nullptr) {
      refused->push_back(path_of(rank, v, kind).string() + ": " + r.refused);
    }
  }
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
  // The simulator's recovery chooses by the same rule (core::choose_version):
  // every rank lists every version, held (by some node) or not.
  std::set<long long> versions;
  for (const auto& list : available) versions.insert(list.begin(), list.end());
  core::SnapshotHoldings holdings;
  for (std::size_t r = 0; r < available.size(); ++r)
    for (long long v : versions) {
      const bool held =
          std::find(available[r].begin(), available[r].end(), v) != available[r].end();
      holdings.replicas.add(static_cast<int>(r), v,
                            held ? std::vector<int>{0} : std::vector<int>{});
    }
  const std::optional<core::VersionChoice> choice = core::choose_version(holdings);
  if (!choice) return std::nullopt;
  return choice->version;
}

}  // namespace parashift::hw
