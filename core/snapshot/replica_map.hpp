// Which hosts hold which version of which shard, and which shards of a
// version have no replica left on a surviving holder. A restore may use a
// version only when EVERY shard still has one (mixing versions would restore
// an inconsistent model): core::choose_version (snapshot_holdings.hpp).
#pragma once

#include <map>
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

/// Shards with no surviving replica of `version` (why it is unusable).
std::vector<int> shards_without_replica(const ReplicaMap& map, long long version,
                                        const std::set<int>& dead_holders);

}  // namespace parashift::core
