// What one policy did over one campaign run (one seed).
#pragma once

#include <string>
#include <vector>

#include "sim/faults/campaign_setup.hpp"
#include "sim/faults/fail_slow.hpp"
#include "sim/faults/failure_events.hpp"

namespace parashift::sim {

struct PolicyRun {
  double useful_s = 0;  // training time whose work survived, in nominal-plan seconds
  double wall_s = 0;
  std::vector<double> lost_work_s;  // per interruption: work discarded
  /// The largest lost-work bound asserted (snapshot: commit gap of a plan
  /// in use, <= the snapshot interval; baseline: the checkpoint interval).
  /// Every interruption without a state loss lost at most its plan's bound.
  double lost_work_bound_s = 0;
  std::vector<double> recovery_s;  // per interruption: failure -> training again
  double stall_s = 0;              // snapshot / checkpoint stalls
  double training_s = 0;           // wall time spent running iterations
  int interruptions = 0;
  int planned = 0;  // of them, planned maintenance
  /// Every in-memory replica of some shard of the newest committed version
  /// died (restored from an older version or the remote checkpoint).
  int state_losses = 0;
  int shrinks = 0;
  int regrows = 0;
  /// Fail-slow episodes: ranks moved off a slow GPU onto a spare (each also
  /// an interruption), and the work lost to training at a slowed pace.
  int migrations = 0;
  double slow_lost_s = 0;
  std::vector<std::string> notes;  // invariant reports (first few)

  double ettr() const { return wall_s > 0 ? useful_s / wall_s : 0; }
  /// Stall time per unit of training time (share of iteration time).
  double overhead() const { return training_s > 0 ? stall_s / training_s : 0; }
};

/// In-memory sharded snapshots replicated across failure domains, spares,
/// restore of lost shards only, shrink-and-replan when no spare is left; a
/// rank on a fail-slow GPU moves to a spare once the slowdown is seen (see
/// snapshot_slow.cpp). Asserts (std::logic_error) its invariants at every
/// interruption, lost work <= the commit gap among them (snapshot_run.hpp).
PolicyRun run_snapshot_policy(CampaignSetup& setup, const std::vector<FailureEvent>& failures,
                              const std::vector<SlowEpisode>& episodes, TimeNs horizon_ns);

/// Periodic synchronous full checkpoints to remote storage; every failure
/// that hits the job restarts it from the newest complete checkpoint.
/// Asserts (std::logic_error) that no failure loses more than one interval.
/// Fail-slow episodes are endured: the job trains at the slowed pace until
/// each ends (no automatic detection: today's practice, per FALCON).
PolicyRun run_baseline_policy(CampaignSetup& setup, const std::vector<FailureEvent>& failures,
                              const std::vector<SlowEpisode>& episodes, TimeNs horizon_ns);

}  // namespace parashift::sim
