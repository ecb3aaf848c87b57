// Which hosts hold which version of which shard, and the newest version a
// restore may use: one for which EVERY shard still has at least one replica
// on a surviving holder (mixing versions would restore an inconsistent model).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <vector>

namespace parashift::core {

class ReplicaMap {
 public:
  /// Records that `holders` (host ids) keep `version` of `shard`.
  void add(int shard, long long version, std::vector<int> holders);
  const std::map<int, std::map<long long, std::vector<int>>>& shards() const { return shards_; }
  /// Every version any shard has, ascending.
  std::set<long long> versions() const;

 private:
  std::map<int, std::map<long long, std::vector<int>>> shards_;
};

/// The newest version such that every shard of the map has it on at least
/// one holder not in `dead_holders`; nullopt when there is none.
std::optional<long long> newest_consistent_version(const ReplicaMap& map,
                                                   const std::set<int>& dead_holders);

/// Shards with no surviving replica of `version` (why it is unusable).
std::vector<int> shards_without_replica(const ReplicaMap& map, long long version,
                                        const std::set<int>& dead_holders);

}  // namespace parashift::core
