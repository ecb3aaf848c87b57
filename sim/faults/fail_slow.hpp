// Fail-slow episodes in a campaign: a GPU computing `factor` times slower
// from at_ns to until_ns. Drawn from faults.fail_slow (per-GPU Poisson
// starts, exponential durations) and taken from the scenario's `slow`
// events (faults.events). A synchronous job runs at the pace of its slowest
// rank, so while a rank sits on a slow GPU the whole job's iteration takes
// the slowed time (PlanTimes::slowed_ns, simulated once per plan and factor).
//
// What a policy loses to an episode is accounted as work: over the time the
// job trains with the rank on that GPU, a share 1 - nominal / slowed of it
// (slow_lost_s). Concurrent episodes count once, at the slowest GPU's
// share, and the snapshot cadence keeps its nominal phase (a slower
// iteration stretches it slightly).
#pragma once

#include <cstdint>
#include <vector>

#include "core/faults/fault_config.hpp"
#include "core/units.hpp"

namespace parashift::sim {

using core::TimeNs;

struct SlowEpisode {
  TimeNs at_ns = 0;
  TimeNs until_ns = 0;
  int gpu = 0;
  double factor = 1;
  friend bool operator<(const SlowEpisode& a, const SlowEpisode& b) {
    return a.at_ns != b.at_ns ? a.at_ns < b.at_ns : a.gpu < b.gpu;
  }
};

/// Episodes starting in [0, horizon) on `gpus` GPU slots: config.fail_slow's
/// rate, sorted; empty when its gpu_mtbf_hours is 0. Deterministic for a
/// seed, and drawn from a stream of their own (failure draws do not change).
std::vector<SlowEpisode> draw_fail_slow(const core::FailSlowConfig& config, int gpus,
                                        std::uint64_t seed, TimeNs horizon_ns);

/// The scenario's `slow` events as episodes (a `node` event: each GPU of the
/// host; no duration: until the horizon), sorted. A GPU or host index out of
/// range -> InputError naming the event.
std::vector<SlowEpisode> scheduled_slow_episodes(const core::FaultConfig& config, int topology_gpus,
                                                 int gpus_per_host, TimeNs horizon_ns);

/// A time interval [from_ns, to_ns).
struct Interval {
  TimeNs from_ns = 0;
  TimeNs to_ns = 0;
};

/// Seconds of `span` inside `intervals` (sorted, disjoint).
double overlap_s(const std::vector<Interval>& intervals, const Interval& span);

/// A stretch of time the job ran slowed, losing `lost_share` of it
/// (1 - nominal / slowed iteration).
struct SlowSpan {
  Interval span;
  double lost_share = 0;
};

/// Seconds of work lost to `spans` while the job trained (`trained`:
/// sorted, disjoint). A synchronous job runs at its slowest GPU's pace, so
/// where spans overlap the time counts once, at the largest share.
double slow_lost_s(const std::vector<Interval>& trained, const std::vector<SlowSpan>& spans);

}  // namespace parashift::sim
