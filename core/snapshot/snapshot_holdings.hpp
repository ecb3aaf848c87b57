// What survives of a job's snapshots after failures, and the version
// recovery restores from it. A backend that keeps snapshots in host memory
// (the simulator) records which memories hold each rank's shard of each
// version it keeps, and which memories died with their hosts; a remote
// checkpoint holds one older version whatever fails. Recovery restores the
// newest version every shard still has on some surviving memory (a mix of
// versions would be an inconsistent model), or the remote checkpoint where
// it is newer or no in-memory version is whole: the same choice the fault
// campaigns make (sim/faults/snapshot_restore.cpp).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/snapshot/replica_map.hpp"

namespace parashift::core {

struct SnapshotHoldings {
  /// Shard = rank; holders = ids of host memories (a host gets a new id
  /// each time it fails: a repaired host comes back empty).
  ReplicaMap replicas;
  std::set<int> dead_holders;
  /// The newest version replicated to its peers (committed); none: none yet.
  /// A version newer than it, still replicating, is held by its owners alone.
  std::optional<long long> committed;
  /// The version the remote checkpoint holds (the initial state: 0); none:
  /// no remote checkpoint.
  std::optional<long long> remote;
};

struct VersionChoice {
  long long version = 0;
  bool from_remote = false;
  /// The newest committed version, when an older one is restored because
  /// some shard of it has no surviving replica (a state loss); none
  /// otherwise (falling back from a version still replicating is no loss).
  std::optional<long long> lost;
  std::vector<int> shards_missing;  // of `lost`: the shards no surviving memory holds
};

/// The version to restore from `holdings`; none where no version is whole
/// and there is no remote checkpoint.
std::optional<VersionChoice> choose_version(const SnapshotHoldings& holdings);

/// "v3000 lost: no surviving host memory holds rank 0's shard" for a state
/// loss; empty otherwise.
std::string describe_loss(const VersionChoice& choice);

}  // namespace parashift::core
