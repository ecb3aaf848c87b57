// The cluster-level `stagger` module of a shared cluster (CASSINI, NSDI'24,
// in its simplest form): jobs whose traffic meets on the same links are
// started at offsets that interleave their communication phases, so that
// each sends while the others compute.
//
//   1. Each job's busy profile: its first iteration alone on the cluster
//      (the plan as written), with every link's busy periods recorded.
//   2. Offsets, job after job in the scenario's order (the first starts at
//      0): each later job tries `steps` offsets spread over its own
//      iteration, k x period / steps, and takes the one whose busy periods,
//      repeated every period from that offset over the horizon, overlap
//      least with those of the jobs already placed, summed over the links
//      both use (ties: the earliest offset).
//
// Jobs of equal periods keep their offsets while the overlap is gone; of
// unequal periods they drift, and the horizon (the shortest job's run)
// prices the overlap they meet on the way. What a policy changes later (a
// re-plan, a compressed sync) is not foreseen.
#pragma once

#include <vector>

#include "core/scenario/shared_cluster.hpp"
#include "sim/kernel.hpp"

namespace parashift::sim {

struct BusyPeriod {
  int link = 0;
  TimeNs start_ns = 0, end_ns = 0;  // within the iteration
};

struct BusyProfile {
  TimeNs period_ns = 0;          // the iteration alone
  std::vector<BusyPeriod> busy;  // by link, then start
};

/// Job `job`'s first iteration alone on `topology` (the cluster as it
/// truly is, which the shared run builds once).
BusyProfile busy_profile(const core::SharedCluster& cluster, std::size_t job,
                         const topo::Topology& topology);

/// Time both overlap on the links they share, over [0, horizon_ns): `a`
/// repeated every period from a_start_ns, `b` from b_start_ns.
TimeNs overlap_ns(const BusyProfile& a, TimeNs a_start_ns, const BusyProfile& b, TimeNs b_start_ns,
                  TimeNs horizon_ns);

struct StaggerPlan {
  std::vector<TimeNs> start_ns;       // each job's first iteration
  TimeNs overlap_ns = 0;              // summed over job pairs, at those starts
  TimeNs unstaggered_overlap_ns = 0;  // ... with every job at 0
  TimeNs horizon_ns = 0;
};

/// The offsets, as the header says.
StaggerPlan plan_stagger(const std::vector<BusyProfile>& profiles,
                         const std::vector<int>& iterations, int steps = 16);

}  // namespace parashift::sim
