// Snapshot shards in a node's shared memory (/dev/shm, a tmpfs): they outlive
// the worker process that wrote them (a kill -9 included) and vanish with the
// node. One directory per job and node, both owner-only (0700):
//   <root>/parashift-<job>/node<k>/r<rank>-v<version>.shard    a rank's own shard (0600)
//   <root>/parashift-<job>/node<k>/r<rank>-v<version>.replica  a copy of another node's rank
// A file is written under a temporary name and renamed, so a name that exists
// is complete. Its header names the job, rank, version, kind and plan, and a
// SHA-256 over header and payload (OpenSSL EVP); read() refuses a shard whose
// header names anything else, that is truncated, or whose hash differs.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace parashift::hw {

enum class ShardKind { Own, Replica };

/// What inspect() found: the payload of a trusted shard, or why it was refused.
struct ShardRead {
  std::optional<std::vector<std::byte>> payload;
  std::string refused;  // empty when payload is set, e.g. "written by job 'b', not 'a'"
  std::string plan;     // the plan the header names, once the header is read and hashed
};

class ShardStore {
 public:
  /// `plan` names the plan the shards belong to (ParallelPlan::label()); a
  /// shard written under another plan is refused.
  ShardStore(std::filesystem::path root, std::string job, int node, std::string plan = "");

  /// Writes the shard 0600 into the node directory (made 0700 on first use).
  /// Throws HwError when the directory is not this user's alone or cannot be written.
  void write(int rank, long long version, ShardKind kind, std::span<const std::byte> payload) const;
  /// The payload, or nothing when the file is missing or refused (see inspect).
  std::optional<std::vector<std::byte>> read(int rank, long long version, ShardKind kind) const;
  /// The payload, or the reason the shard is not trusted: missing, another
  /// job, rank, version, kind or plan, truncated, trailing bytes, hash mismatch.
  ShardRead inspect(int rank, long long version, ShardKind kind) const;
  /// Versions with a file of this rank and kind, newest first (names only).
  std::vector<long long> versions(int rank, ShardKind kind) const;
  /// The versions of this rank and kind whose shard inspect() trusts (each
  /// file is read and hashed), newest first. Each one refused is appended to
  /// `refused`, when given, as "<path>: <reason>".
  std::vector<long long> trusted_versions(int rank, ShardKind kind,
                                          std::vector<std::string>* refused = nullptr) const;
  /// Every (rank, version) with a file of this kind (names only), ascending.
  std::vector<std::pair<int, long long>> entries(ShardKind kind) const;
  /// The ranks with a file of this version and kind (names only), ascending.
  std::vector<int> ranks_of(long long version, ShardKind kind) const;
  /// Deletes all but the newest `keep` versions of this rank and kind.
  void prune(int rank, ShardKind kind, int keep) const;

  const std::filesystem::path& node_dir() const { return dir_; }
  std::filesystem::path path_of(int rank, long long version, ShardKind kind) const;
  /// <root>/parashift-<job>: every node's shards of the job.
  static std::filesystem::path job_dir(const std::filesystem::path& root, const std::string& job);

 private:
  std::filesystem::path dir_;
  std::string job_;
  std::string plan_;
};

/// The newest version every rank can restore (core::choose_version): available[r] lists the
/// versions of rank r's shard that exist somewhere (own store or a replica).
std::optional<long long> newest_common_version(
    const std::vector<std::vector<long long>>& available);

}  // namespace parashift::hw
