#include "core/snapshot/snapshot_holdings.hpp"

#include <algorithm>

namespace parashift::core {

namespace {

// The shards that keep `version` with no holder outside `dead`. Each version
// is judged on its own shards: a version of a shrunk plan has fewer ranks.
std::vector<int> missing_shards(const ReplicaMap& map, long long version,
                                const std::set<int>& dead) {
  std::vector<int> out;
  for (const auto& [shard, by_version] : map.shards()) {
    const auto it = by_version.find(version);
    if (it == by_version.end()) continue;
    if (std::none_of(it->second.begin(), it->second.end(),
                     [&](int holder) { return dead.count(holder) == 0; }))
      out.push_back(shard);
  }
  return out;
}

}  // namespace

std::optional<VersionChoice> choose_version(const SnapshotHoldings& holdings) {
  std::optional<long long> whole;
  const std::set<long long> kept = holdings.replicas.versions();
  for (auto v = kept.rbegin(); v != kept.rend() && !whole; ++v)
    if (missing_shards(holdings.replicas, *v, holdings.dead_holders).empty()) whole = *v;
  VersionChoice choice;
  if (whole && (!holdings.remote || *whole >= *holdings.remote)) {
    choice.version = *whole;
  } else if (holdings.remote) {
    choice.version = *holdings.remote;
    choice.from_remote = true;
  } else {
    return std::nullopt;
  }
  // A committed version newer than the one restored lost a shard.
  if (holdings.committed && *holdings.committed > choice.version) {
    choice.lost = *holdings.committed;
    choice.shards_missing = missing_shards(holdings.replicas, *choice.lost, holdings.dead_holders);
  }
  return choice;
}

std::string describe_loss(const VersionChoice& choice) {
  if (!choice.lost) return {};
  std::string shards;
  const std::size_t named = std::min<std::size_t>(choice.shards_missing.size(), 3);
  for (std::size_t k = 0; k < named; ++k)
    shards += (k ? ", " : "") + std::to_string(choice.shards_missing[k]);
  if (choice.shards_missing.size() > named)
    shards += " and " + std::to_string(choice.shards_missing.size() - named) + " more";
  return "v" + std::to_string(*choice.lost) + " lost: no surviving host memory holds " +
         (choice.shards_missing.size() > 1 ? "the shards of ranks " + shards
                                           : "rank " + shards + "'s shard");
}

}  // namespace parashift::core
