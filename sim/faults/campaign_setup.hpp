// Everything a campaign derives once per scenario and reuses for every seed
// and policy: iteration times per plan (SimBackend, once per plan), the
// state each rank snapshots, snapshot stall and replication time, remote
// checkpoint write time, and both intervals (Young/Daly unless fixed).
//
// Snapshot interval: faults.snapshot.interval, or for `auto` Daly's optimum
// rounded to whole iterations (at least one). It bounds the work between
// committed versions; the cadence starts each snapshot `replication` early so
// the bound holds (core::snapshot_cadence). A fixed interval that no cadence
// can honour (shorter than one iteration plus replication) is an InputError
// naming the field; an auto one is raised to the smallest commit gap.
//
// Snapshot stall: the device -> host copy of a rank's state at
// snapshot.host_copy_gbps, charged in full (training waits; overlapping it
// with the next forward pass, as CheckFreq does, would only lower it).
// Baseline checkpoint: checkpoint_bytes() written synchronously at
// baseline.storage_gbps (aggregate), read back at the same rate on restart.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "core/faults/fault_config.hpp"
#include "core/planner/planner.hpp"
#include "core/scenario/scenario.hpp"
#include "core/snapshot/rank_state.hpp"
#include "sim/faults/cluster_slots.hpp"
#include "sim/faults/failure_events.hpp"
#include "sim/faults/restore_timer.hpp"
#include "sim/sim_backend.hpp"

namespace parashift::sim {

struct PlanTiming {
  TimeNs iteration_ns = 0;
  double training_share = 0;      // busiest dp group's collective time / iteration
  TimeNs snapshot_window_ns = 0;  // what a snapshot's copy can hide under (snapshot_window_ns)
};

/// Iteration time per plan, simulated once per plan and reused (the
/// scenario's slowdown events are campaign episodes, not part of it). A
/// shrunk plan, the same shape and batch per replica on fewer replicas,
/// takes the time of one simulated with at most 1/16 more replicas: each
/// replica's work is the same and a ring's time hardly depends on its size
/// (on the 16K campaign dp 119 and dp 128 differ by 0.4%).
class PlanTimes {
 public:
  explicit PlanTimes(const core::Scenario& scenario);
  PlanTiming get(const core::ParallelPlan& plan);
  /// The iteration with rank `rank`'s GPU `factor` times slower, simulated
  /// once per plan and factor (at the first rank asked: a replica's pace
  /// hardly depends on which of its stages is slow) and reused.
  TimeNs slowed_ns(const core::ParallelPlan& plan, int rank, double factor);
  /// The iteration with one tensor-parallel group split over two hosts
  /// (rank 0 moved onto a spare GPU alone: faults.replace gpu), so its
  /// collectives leave NVLink; simulated once per plan and reused. The
  /// plan's own time when the scenario has no spare to split onto.
  TimeNs split_ns(const core::ParallelPlan& plan);
  /// The iteration with the first host's ranks moved together onto a spare
  /// host in another rack (faults.replace host after a failure, where no
  /// spare is in the failed host's rack): its pipeline sends and ring legs
  /// leave the rack's leaves. Simulated once per plan and reused; the
  /// plan's own time when no spare host is in another rack.
  TimeNs off_rack_ns(const core::ParallelPlan& plan);
  /// Plans simulated so far (stand-ins count once).
  std::size_t simulated() const { return simulated_.size(); }

 private:
  static constexpr int kStandInNum = 15, kStandInDen = 16;  // dp >= 15/16 of the simulated one
  /// The simulated plan whose times `plan` takes (itself, the first time).
  const core::ParallelPlan& stand_in(const core::ParallelPlan& plan);
  /// The iteration of `plan`'s stand-in with the ranks moved as `choose`
  /// says on a fresh backend (none: the plan's own time), cached in `cache`.
  using RemapChoice = std::function<std::vector<core::RemapDirective>(
      const core::Capabilities& launch, const core::ParallelPlan& plan)>;
  TimeNs remapped_ns(std::map<std::string, TimeNs>& cache, const core::ParallelPlan& plan,
                     const RemapChoice& choose);

  const core::Scenario& scenario_;
  SimBackend backend_;
  std::deque<core::ParallelPlan> simulated_;
  std::map<std::string, PlanTiming> cache_;
  std::map<std::string, TimeNs> slowed_;
  std::map<std::string, TimeNs> split_;
  std::map<std::string, TimeNs> off_rack_;
};

struct CampaignSetup {
  const core::Scenario* scenario = nullptr;
  core::FaultConfig config;
  ClusterSlots slots;
  FailureTargets targets;
  core::RankState state;
  PlanTiming nominal;
  double failures_per_hour = 0;  // whole cluster, all kinds
  TimeNs snapshot_stall_ns = 0;
  TimeNs replication_ns = 0;
  // Snapshot cadence under the lost-work bound (core/snapshot/interval.hpp):
  TimeNs snapshot_interval_ns = 0;  // the bound: faults.snapshot.interval, or auto
  bool snapshot_interval_auto = true;
  int snapshot_every = 1;          // iterations between snapshot starts
  TimeNs snapshot_cadence_ns = 0;  // snapshot_every iterations of training
  TimeNs commit_gap_ns = 0;        // cadence + replication <= snapshot_interval_ns
  double checkpoint_bytes = 0;
  TimeNs checkpoint_write_ns = 0;  // also the read time on restart
  TimeNs checkpoint_interval_ns = 0;
  int checkpoint_every = 1;
  core::PlannerInput planner_base;
  std::unique_ptr<PlanTimes> times;
  std::unique_ptr<RestoreTimer> restore;
};

/// The baseline job's time down per unplanned interruption: detection,
/// the full restart, reading the checkpoint back.
TimeNs baseline_restart_ns(const CampaignSetup& setup);

std::unique_ptr<CampaignSetup> make_campaign_setup(const core::Scenario& scenario,
                                                   const core::FaultConfig& config);

}  // namespace parashift::sim
