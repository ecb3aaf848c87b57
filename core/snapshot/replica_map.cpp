#include "core/snapshot/replica_map.hpp"

#include <algorithm>

namespace parashift::core {

void ReplicaMap::add(int shard, long long version, std::vector<int> holders) {
  auto& held = shards_[shard][version];
  held.insert(held.end(), holders.begin(), holders.end());
}

std::set<long long> ReplicaMap::versions() const {
  std::set<long long> out;
  for (const auto& [shard, by_version] : shards_) {
    for (const auto& [version, holders] : by_version) out.insert(version);
  }
  return out;
}

std::vector<int> shards_without_replica(const ReplicaMap& map, long long version,
                                        const std::set<int>& dead_holders) {
  std::vector<int> out;
  for (const auto& [shard, by_version] : map.shards()) {
    const auto it = by_version.find(version);
    const bool alive = it != by_version.end() &&
                       std::any_of(it->second.begin(), it->second.end(),
                                   [&](int holder) { return dead_holders.count(holder) == 0; });
    if (!alive) out.push_back(shard);
  }
  return out;
}

}  // namespace parashift::core
