#include <algorithm>
#include <stdexcept>
#include <string>

#include "sim/faults/policy_run.hpp"

namespace parashift::sim {

// Segment model: after a (re)start at seg_start with work w0, the job runs
// `every` iterations then writes a checkpoint (stall `write`), repeatedly:
// cycle = every * it + write. Checkpoint j (1-based) is complete at
// seg_start + j * cycle and holds w0 + j * every * it of work.
PolicyRun run_baseline_policy(CampaignSetup& setup, const std::vector<FailureEvent>& failures,
                              const std::vector<SlowEpisode>& episodes, TimeNs horizon_ns) {
  PolicyRun run;
  run.wall_s = core::ns_to_s(horizon_ns);
  const TimeNs it = setup.nominal.iteration_ns;
  const TimeNs run_ns = setup.checkpoint_every * it;
  const TimeNs cycle = run_ns + setup.checkpoint_write_ns;
  const TimeNs restart_ns = baseline_restart_ns(setup);  // detect, restart, read the checkpoint
  const double bound_s = core::ns_to_s(run_ns);
  run.lost_work_bound_s = bound_s;
  TimeNs seg = 0;
  double w0 = 0;
  std::vector<Interval> trained;  // up between restarts
  auto close = [&](TimeNs t, double& work, double& saved) {
    const TimeNs e = std::max<TimeNs>(0, t - seg);
    const TimeNs cycles = e / cycle;
    const TimeNs rem = e - cycles * cycle;
    run.stall_s +=
        core::ns_to_s(cycles * setup.checkpoint_write_ns + std::max<TimeNs>(0, rem - run_ns));
    run.training_s += core::ns_to_s(cycles * run_ns + std::min(rem, run_ns));
    work = w0 + core::ns_to_s(cycles * run_ns + std::min(rem, run_ns));
    saved = w0 + core::ns_to_s(cycles * run_ns);
  };
  for (const FailureEvent& f : failures) {
    if (f.at_ns >= horizon_ns) break;
    // The baseline job has no spares: failures of spare slots do not touch it.
    if ((f.kind == core::FailureKind::Gpu || f.kind == core::FailureKind::Nic) &&
        f.target >= setup.slots.topology_gpus) {
      continue;
    }
    const bool planned = f.kind == core::FailureKind::Maintenance;
    if ((f.kind == core::FailureKind::Node || planned) && f.target >= setup.slots.topology_hosts) {
      continue;
    }
    ++run.interruptions;
    run.planned += planned ? 1 : 0;
    double work = w0;
    double saved = w0;
    TimeNs restart = restart_ns;
    if (f.at_ns >= seg) {
      if (f.at_ns > seg) trained.push_back({seg, f.at_ns});
      close(f.at_ns, work, saved);
      if (planned) {
        // Announced: one more checkpoint before the stop (its write is part
        // of the restart), no detection; nothing is lost.
        saved = work;
        restart = setup.checkpoint_write_ns + setup.config.baseline.restart_ns +
                  setup.checkpoint_write_ns;
      }
    }  // else: still restarting; nothing new to lose
    // Synchronous checkpoints: at most one interval of work since the last.
    if (work - saved > bound_s + 1e-6) {
      throw std::logic_error("baseline invariant broken: lost " + std::to_string(work - saved) +
                             " s, more than the checkpoint interval " + std::to_string(bound_s) +
                             " s");
    }
    run.lost_work_s.push_back(work - saved);
    const TimeNs end = f.at_ns + restart;
    run.recovery_s.push_back(core::ns_to_s(end - f.at_ns));
    seg = end;
    w0 = saved;
  }
  double work = w0;
  double saved = w0;
  if (horizon_ns > seg) {
    trained.push_back({seg, horizon_ns});
    close(horizon_ns, work, saved);
  }
  // Fail-slow episodes, endured: rank g runs on GPU g for the whole run.
  const core::ParallelPlan& plan = setup.scenario->plan;
  std::vector<SlowSpan> spans;
  for (const SlowEpisode& e : episodes) {
    if (e.gpu >= plan.gpus()) continue;
    const TimeNs slowed = setup.times->slowed_ns(plan, e.gpu, e.factor);
    if (slowed <= it) continue;
    spans.push_back(
        {{e.at_ns, e.until_ns}, 1.0 - static_cast<double>(it) / static_cast<double>(slowed)});
  }
  run.slow_lost_s = slow_lost_s(trained, spans);
  run.useful_s = work - run.slow_lost_s;
  return run;
}

}  // namespace parashift::sim
