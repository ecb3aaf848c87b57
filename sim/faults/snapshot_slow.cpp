// Fail-slow episodes under the snapshot policy (snapshot_run.hpp). The
// straggler detector names a slow GPU (window + 1) / 2 + patience - 1
// slowed iterations after it starts when its slowdown reaches the
// detector's threshold (core/controller/straggler_detector.hpp: 5
// iterations, 1.15x, by default). The policy then moves the rank (with its
// host's, under faults.replace host) to a spare the way planned maintenance
// moves a host's: the iteration in flight finishes, the state is saved and
// replicated, the ranks restart on the spare from it; the GPUs rejoin the
// spares when the episode ends.
// Without a free spare, or below the threshold, the job endures the episode.
#include <algorithm>

#include "sim/faults/snapshot_run.hpp"

namespace parashift::sim::detail {

namespace {

struct Detection {
  double threshold = 1.15;
  int iterations = 5;
};

Detection detection_of(const core::Scenario& scenario) {
  Detection d;
  const core::PolicyConfig& policy = scenario.policy;
  if (const core::ModuleConfig* m = policy.find("straggler")) {
    d.threshold = m->knob("threshold");
    d.iterations = (policy.window + 1) / 2 + static_cast<int>(m->knob("patience")) - 1;
  }
  return d;
}

}  // namespace

void SnapshotRun::on_slow(const SlowEpisode& e) {
  const int rank = mapping_->rank(e.gpu);
  if (rank < 0 || gpu_down_[static_cast<std::size_t>(e.gpu)]) return;  // an idle spare
  const TimeNs slowed = s_.times->slowed_ns(plan_, rank, e.factor);
  if (slowed <= timing_.iteration_ns) return;
  const double lost_share =
      1.0 - static_cast<double>(timing_.iteration_ns) / static_cast<double>(slowed);
  const Detection d = detection_of(*s_.scenario);
  const TimeNs seen = e.at_ns + d.iterations * slowed;
  if (e.factor < d.threshold || seen >= e.until_ns || seen >= horizon_ns_) {
    slow_spans_.push_back({{e.at_ns, e.until_ns}, lost_share});
    return;
  }
  kernel_.schedule_at(seen, [this, e, rank, lost_share] { on_slow_seen(e, rank, lost_share); });
}

void SnapshotRun::on_slow_seen(const SlowEpisode& e, int rank, double lost_share) {
  const TimeNs now = kernel_.now();
  if (mapping_->rank(e.gpu) != rank || gpu_down_[static_cast<std::size_t>(e.gpu)]) {
    // A failure moved the rank meanwhile.
    slow_spans_.push_back({{e.at_ns, now}, lost_share});
    return;
  }
  if (!training_ || pool_.empty()) {
    slow_spans_.push_back({{e.at_ns, e.until_ns}, lost_share});
    return;
  }
  slow_spans_.push_back({{e.at_ns, now}, lost_share});
  interrupt(now, replaced_gpus(e.gpu), {}, false, Cause::Migration, e.until_ns - now);
}

double SnapshotRun::slow_work_lost() {
  const double lost = slow_lost_s(trained_, slow_spans_);
  run_.slow_lost_s = lost;
  return lost;
}

}  // namespace parashift::sim::detail
