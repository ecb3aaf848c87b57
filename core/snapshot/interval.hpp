// How often to snapshot.
//
// The optimum: the interval that minimises expected lost time given the
// cost C of one snapshot (training stalled) and the mean time between
// failures M of the whole job.
//
//   Young (1974), "A first order approximation to the optimum checkpoint
//   interval", CACM 17(9):  tau = sqrt(2 C M).
//   Daly (2006), "A higher order estimate of the optimum checkpoint interval
//   for restart dumps", FGCS 22(3), eq. (37): for C < 2M,
//     tau = sqrt(2 C M) * [1 + (1/3) sqrt(C / (2M)) + (1/9) (C / (2M))] - C,
//   and tau = M otherwise. tau is compute time between the end of one
//   snapshot and the start of the next.
//
// The cadence under a lost-work bound. The snapshot interval is a recovery
// point objective (RPO): the most training work a failure may discard. A
// snapshot protects against every failure only once it is COMMITTED: copied
// device -> host (training stalls) and then replicated to its peer hosts
// (`replication`, in the background while training goes on). Until then a
// failure that takes the owner host's memory makes the restore fall back to
// the previous committed version. So the work at risk is not bounded by the
// gap between snapshot starts but by the gap between consecutive commits:
//
//   commit gap = every * iteration + replication
//
// (snapshot k+1's state is reached `every` iterations after snapshot k's,
// and is committed `replication` later, training running meanwhile). A
// failure at any moment loses at most the work since the newest committed
// version, i.e. at most the commit gap. The interval is therefore counted
// from commit to commit: each snapshot starts `replication` earlier than the
// interval alone would say,
//
//   every = floor((interval - replication) / iteration),
//
// and at least max(1, ceil(replication / iteration)) so that one replication
// is in flight at a time (a snapshot commits before the next one starts).
// This is how production in-memory checkpointing states its guarantee (the
// promise is about recoverable state, not about when copies start); pinning
// the previous version until the next commits (sim/faults/snapshot_policy.cpp
// does that too) is what makes the fall-back possible, but on its own it is
// exactly the fall-back that overshoots the interval.
#pragma once

#include "core/units.hpp"

namespace parashift::core {

double young_interval_s(double cost_s, double mtbf_s);
double daly_interval_s(double cost_s, double mtbf_s);

struct SnapshotCadence {
  long long every = 1;        // iterations between snapshot starts
  TimeNs commit_gap_ns = 0;   // every * iteration + replication: most work at risk
  bool feasible = true;       // commit_gap_ns <= the interval asked for
};

/// The cadence that keeps the commit gap within `interval_ns` (see the file
/// comment). When even the smallest cadence cannot, `feasible` is false and
/// `every` is that smallest cadence. Needs iteration_ns > 0, others >= 0.
SnapshotCadence snapshot_cadence(TimeNs interval_ns, TimeNs iteration_ns, TimeNs replication_ns);

}  // namespace parashift::core
