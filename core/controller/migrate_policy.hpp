// The `migrate` policy module: moves the ranks off a fail-slow GPU onto
// spares while the job runs, the decision the fault campaigns make for a
// fail-slow episode (sim/faults/snapshot_slow.cpp), here through directives
// so the one loop makes it on every backend that offers spares.
//
// When the straggler detector names a GPU at least `min_slowdown` times
// slower (a Gpu finding; the `straggler` module must be on) and the
// backend offers spares (Capabilities::spare_gpus), it prices the move:
// the gain is the measured iteration now over the median of the iterations
// before the GPU was flagged, times the iterations left; the cost is one
// rank's state saved to host memory and restored on the spare (twice its
// bytes over SnapshotConfig's host copy rate; the host's GPUs copy in
// parallel) plus `reinit_s` for the restarted ranks and rebuilt
// communicators (faults.reinit's default). When the gain is larger it
// issues, before the next iteration, a snapshot of that iteration's state,
// a RemapDirective per moving rank to the nearest spare
// (core::remap_to_spares, as recovery picks) and a restore of the snapshot:
// no work is lost, the iteration runs on the spares. With `whole_host` (the
// default, as faults.replace: host) every rank on the slow GPU's host moves
// with it, to one spare host when one is free, so a tensor-parallel group
// stays on NVLink; without it a lone rank moves only onto a spare GPU of
// its own host when tp > 1 (elsewhere its group would span two hosts, its
// collectives through a NIC: slower than the slow GPU). A move that would
// leave a rank without a spare is not made. The slow GPU's host is not chosen as a spare again in
// this run (the module cannot see the episode end). A backend without spares or in-memory snapshots
// (the executor: its spares are nodes for the elastic launcher) is told once and left.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <set>

#include "core/controller/policy_module.hpp"

namespace parashift::core {

struct MigrateOptions {
  double min_slowdown = 1.15;  // a Gpu finding at least this much slower
  double reinit_s = 20;        // restart the rank, rebuild the communicators
  bool whole_host = true;      // move every rank of the slow GPU's host (faults.replace: host)
};

class MigratePolicy : public PolicyModule {
 public:
  explicit MigratePolicy(MigrateOptions options) : options_(options) {}
  void run(PolicyContext& context) override;

 private:
  /// The median iteration before `iteration` (0: none recorded).
  TimeNs healthy_ns(std::int64_t before) const;

  MigrateOptions options_;
  std::deque<std::pair<std::int64_t, TimeNs>> recent_;  // (iteration, time), the last 32
  std::map<int, std::int64_t> moved_at_;                // rank -> iteration it moved after
  std::set<int> slow_hosts_;                            // hosts ranks were moved off
  bool told_blind_ = false;
  bool told_short_ = false;
  bool told_split_ = false;
};

}  // namespace parashift::core
