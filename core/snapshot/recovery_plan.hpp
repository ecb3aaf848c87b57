// The output of a recovery decision: which ranks go to which spares, which
// shards move from where to where (bytes), an optional new plan (data
// parallelism shrunk), and the predicted time. Printable, serialisable, and
// convertible to the Backend's directives.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/directive.hpp"
#include "core/parallel_plan.hpp"
#include "core/snapshot/rank_state.hpp"
#include "core/snapshot/remap.hpp"
#include "core/units.hpp"

namespace parashift::core {

struct ShardMove {
  int rank = 0;
  ShardKind kind = ShardKind::Parameters;
  long long version = 0;
  int from_host = 0;  // host memory holding the replica read
  int to_gpu = 0;
  double bytes = 0;
};

struct RecoveryPlan {
  long long version = -1;               // snapshot version restored; -1: remote checkpoint
  bool from_remote_checkpoint = false;  // every in-memory replica of some shard was lost
  std::vector<Placement> remaps;
  std::vector<ShardMove> moves;        // across the network or PCIe, lost ranks only
  std::optional<ParallelPlan> replan;  // data parallelism shrunk
  TimeNs detect_ns = 0;                // heartbeat timeout
  TimeNs reinit_ns = 0;                // restart ranks, rebuild communicators
  TimeNs transfer_ns = 0;              // restore traffic
  std::string note;                    // e.g. why the remote checkpoint was needed

  TimeNs total_ns() const { return detect_ns + reinit_ns + transfer_ns; }
  double moved_bytes() const;
  /// The directives a controller sends: Remap per rank, Replan, then Restore.
  std::vector<Directive> directives() const;
};

/// Invariant: a restore moves only shards of lost ranks. Throws
/// std::logic_error naming the first move of a rank not in `lost_ranks`.
void check_moves_only_lost(const RecoveryPlan& plan, const std::set<int>& lost_ranks);

std::string to_string(const RecoveryPlan& plan);
void to_json(nlohmann::json& out, const RecoveryPlan& plan);

}  // namespace parashift::core
