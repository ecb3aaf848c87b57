#include "sim/faults/campaign.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>

#include <nlohmann/json.hpp>

#include "core/faults/duration.hpp"

namespace parashift::sim {

Percentiles percentiles(std::vector<double> values) {
  Percentiles p;
  if (values.empty()) return p;
  std::sort(values.begin(), values.end());
  auto rank = [&](double q) {
    const auto n = static_cast<double>(values.size());
    const auto k = static_cast<std::size_t>(std::max(1.0, std::ceil(q / 100.0 * n)));
    return values[std::min(k, values.size()) - 1];
  };
  double sum = 0;
  for (double v : values) sum += v;
  p.mean = sum / static_cast<double>(values.size());
  p.min = values.front();
  p.p1 = rank(1);
  p.p10 = rank(10);
  p.p50 = rank(50);
  p.p90 = rank(90);
  p.p99 = rank(99);
  p.max = values.back();
  return p;
}

namespace {

struct Collect {
  std::vector<double> ettr, lost, recovery, overhead, slow_lost;
  PolicySummary summary;
  void add(const PolicyRun& r) {
    ettr.push_back(r.ettr());
    overhead.push_back(r.overhead());
    lost.insert(lost.end(), r.lost_work_s.begin(), r.lost_work_s.end());
    recovery.insert(recovery.end(), r.recovery_s.begin(), r.recovery_s.end());
    summary.interruptions += r.interruptions;
    summary.planned += r.planned;
    summary.state_losses += r.state_losses;
    summary.lost_work_bound_s = std::max(summary.lost_work_bound_s, r.lost_work_bound_s);
    summary.shrinks += r.shrinks;
    summary.regrows += r.regrows;
    summary.migrations += r.migrations;
    slow_lost.push_back(r.wall_s > 0 ? r.slow_lost_s / r.wall_s : 0);
    for (const auto& n : r.notes) {
      if (summary.notes.size() < 8) summary.notes.push_back(n);
    }
  }
  PolicySummary finish(const char* name) {
    summary.name = name;
    summary.ettr = percentiles(ettr);
    summary.lost_work_s = percentiles(lost);
    summary.recovery_s = percentiles(recovery);
    summary.overhead = percentiles(overhead);
    summary.slow_lost = percentiles(slow_lost);
    return summary;
  }
};

nlohmann::json json_of(const Percentiles& p) {
  return {{"mean", p.mean}, {"min", p.min}, {"p1", p.p1},   {"p10", p.p10},
          {"p50", p.p50},   {"p90", p.p90}, {"p99", p.p99}, {"max", p.max}};
}

nlohmann::json json_of(const PolicySummary& s) {
  return {{"ettr", json_of(s.ettr)},
          {"lost_work_s", json_of(s.lost_work_s)},
          {"lost_work_bound_s", s.lost_work_bound_s},
          {"recovery_s", json_of(s.recovery_s)},
          {"overhead", json_of(s.overhead)},
          {"interruptions", s.interruptions},
          {"planned", s.planned},
          {"state_losses", s.state_losses},
          {"shrinks", s.shrinks},
          {"regrows", s.regrows},
          {"migrations", s.migrations},
          {"fail_slow_lost", json_of(s.slow_lost)},
          {"notes", s.notes}};
}

}  // namespace

CampaignResult run_campaign(CampaignSetup& setup, const CampaignOptions& options) {
  CampaignResult result;
  result.seeds = options.seeds;
  result.days = options.days;
  const TimeNs horizon_ns = core::seconds_to_ns(options.days * 86400.0);
  const auto scheduled = scheduled_failures(setup.config, setup.targets, setup.scenario->topology);
  const auto scheduled_slow =
      scheduled_slow_episodes(setup.config, setup.slots.topology_gpus,
                              setup.scenario->topology.gpus_per_host(), horizon_ns);
  Collect snap, base;
  for (int seed = 0; seed < options.seeds; ++seed) {
    const std::uint64_t draw_seed = campaign_draw_seed(setup.scenario->run.seed, seed);
    std::vector<FailureEvent> failures =
        options.trace ? *options.trace
                      : draw_failures(setup.config, setup.targets, draw_seed, horizon_ns);
    failures.insert(failures.end(), scheduled.begin(), scheduled.end());
    std::stable_sort(failures.begin(), failures.end());
    for (const auto& f : failures) {
      if (f.at_ns >= horizon_ns) continue;
      (f.kind == core::FailureKind::Maintenance ? result.planned : result.failures) += 1;
    }
    std::vector<SlowEpisode> episodes =
        draw_fail_slow(setup.config.fail_slow, setup.slots.gpus(), draw_seed, horizon_ns);
    episodes.insert(episodes.end(), scheduled_slow.begin(), scheduled_slow.end());
    std::stable_sort(episodes.begin(), episodes.end());
    result.slow_episodes += static_cast<long long>(episodes.size());
    snap.add(run_snapshot_policy(setup, failures, episodes, horizon_ns));
    base.add(run_baseline_policy(setup, failures, episodes, horizon_ns));
    if (options.progress) options.progress(seed + 1, options.seeds);
  }
  result.snapshot = snap.finish("snapshot");
  result.baseline = base.finish("baseline");
  return result;
}

core::CheckpointRestart baseline_model_inputs(const CampaignSetup& setup, const CampaignResult& r) {
  core::CheckpointRestart in;
  const double wall_s = r.seeds * r.days * 86400.0;
  in.rate_per_s =
      wall_s > 0 ? static_cast<double>(r.baseline.interruptions - r.baseline.planned) / wall_s : 0;
  in.interval_s = core::ns_to_s(setup.checkpoint_every * setup.nominal.iteration_ns);
  in.write_s = core::ns_to_s(setup.checkpoint_write_ns);
  in.restart_s = core::ns_to_s(baseline_restart_ns(setup));
  return in;
}

nlohmann::json to_json(const CampaignSetup& setup, const CampaignResult& r) {
  nlohmann::json j;
  j["scenario"] = setup.scenario->name;
  j["seeds"] = r.seeds;
  j["days"] = r.days;
  j["failures"] = r.failures;
  j["planned_maintenance"] = r.planned;
  j["fail_slow_episodes"] = r.slow_episodes;
  j["failures_per_hour"] = setup.failures_per_hour;
  j["iteration_s"] = core::ns_to_s(setup.nominal.iteration_ns);
  j["snapshot"] = {{"rank_state_bytes", setup.state.total_bytes()},
                   {"stall_s", core::ns_to_s(setup.snapshot_stall_ns)},
                   {"replication_s", core::ns_to_s(setup.replication_ns)},
                   {"interval_s", core::ns_to_s(setup.snapshot_interval_ns)},
                   {"interval_auto", setup.snapshot_interval_auto},
                   {"every_iterations", setup.snapshot_every},
                   {"cadence_s", core::ns_to_s(setup.snapshot_cadence_ns)},
                   {"commit_gap_s", core::ns_to_s(setup.commit_gap_ns)},
                   {"keep_versions", setup.config.snapshot.keep_versions},
                   {"replicas", setup.config.snapshot.replicas},
                   {"domain", core::to_string(setup.config.snapshot.domain)},
                   {"spares", setup.config.spares}};
  j["baseline"] = {{"checkpoint_bytes", setup.checkpoint_bytes},
                   {"write_s", core::ns_to_s(setup.checkpoint_write_ns)},
                   {"interval_s", core::ns_to_s(setup.checkpoint_interval_ns)},
                   {"every_iterations", setup.checkpoint_every}};
  const core::CheckpointRestart model = baseline_model_inputs(setup, r);
  j["baseline_model"] = {{"interruptions_per_hour", model.rate_per_s * 3600},
                         {"restart_s", model.restart_s},
                         {"kokolis_first_order", core::kokolis_ettr(model)},
                         {"renewal_exact", core::renewal_ettr(model)},
                         {"campaign_mean", r.baseline.ettr.mean}};
  j["policies"] = {{"snapshot", json_of(r.snapshot)}, {"baseline", json_of(r.baseline)}};
  return j;
}

void print_campaign(std::ostream& out, const CampaignSetup& setup, const CampaignResult& r) {
  char buf[512];
  std::snprintf(
      buf, sizeof buf,
      "scenario      %s\ncampaign      %d seeds x %.4g days, %lld failures (%.3f per hour, "
      "one every %.2f h)\niteration     %.3f s\n",
      setup.scenario->name.c_str(), r.seeds, r.days, r.failures, setup.failures_per_hour,
      setup.failures_per_hour > 0 ? 1 / setup.failures_per_hour : 0.0,
      core::ns_to_s(setup.nominal.iteration_ns));
  out << buf;
  if (r.planned > 0) {
    std::snprintf(
        buf, sizeof buf, "maintenance   %lld planned events (one host each, out %s, announced)\n",
        r.planned, core::format_duration_text(setup.config.maintenance.duration_ns).c_str());
    out << buf;
  }
  std::snprintf(buf, sizeof buf,
                "snapshots     %.2f GB per rank, stall %.3f s, replication %.2f s, every %d "
                "iterations (%.1f s), %d replicas by %s, %d spares\n"
                "              interval %.1f s (%s): committed versions at most %.1f s of work "
                "apart\n",
                setup.state.total_bytes() / 1e9, core::ns_to_s(setup.snapshot_stall_ns),
                core::ns_to_s(setup.replication_ns), setup.snapshot_every,
                core::ns_to_s(setup.snapshot_cadence_ns), setup.config.snapshot.replicas,
                core::to_string(setup.config.snapshot.domain), setup.config.spares,
                core::ns_to_s(setup.snapshot_interval_ns),
                setup.snapshot_interval_auto ? "auto" : "set", core::ns_to_s(setup.commit_gap_ns));
  out << buf;
  std::snprintf(buf, sizeof buf,
                "baseline      %.2f TB checkpoint, write %.2f s, every %d iterations (%.1f min), "
                "restart %s\n\n",
                setup.checkpoint_bytes / 1e12, core::ns_to_s(setup.checkpoint_write_ns),
                setup.checkpoint_every, core::ns_to_s(setup.checkpoint_interval_ns) / 60,
                core::format_duration_text(setup.config.baseline.restart_ns).c_str());
  out << buf;
  // ETTR's bad tail is its low end: min, p1, p10 (a share of seeds at or
  // below), then the median. Lost work and recovery: their high end.
  out << "policy      ETTR min / p1 / p10 / p50               lost work s p50 / p90 / p99    "
         "recovery s p50 / p90 / p99   overhead p50\n";
  for (const PolicySummary* s : {&r.snapshot, &r.baseline}) {
    std::snprintf(buf, sizeof buf,
                  "%-10s  %6.2f%% / %6.2f%% / %6.2f%% / %6.2f%%    %8.1f / %8.1f / %8.1f    "
                  "%7.1f / %7.1f / %7.1f    %.3f%%\n",
                  s->name.c_str(), 100 * s->ettr.min, 100 * s->ettr.p1, 100 * s->ettr.p10,
                  100 * s->ettr.p50, s->lost_work_s.p50, s->lost_work_s.p90, s->lost_work_s.p99,
                  s->recovery_s.p50, s->recovery_s.p90, s->recovery_s.p99, 100 * s->overhead.p50);
    out << buf;
  }
  const core::CheckpointRestart model = baseline_model_inputs(setup, r);
  std::snprintf(buf, sizeof buf,
                "baseline against closed forms at its %.3f unplanned interruptions per hour "
                "(restart %.1f s): Kokolis et al. first-order %.2f%%, exact %.2f%%, campaign "
                "mean %.2f%% (fail-slow and maintenance in neither form%s)\n",
                model.rate_per_s * 3600, model.restart_s, 100 * core::kokolis_ettr(model),
                100 * core::renewal_ettr(model), 100 * r.baseline.ettr.mean,
                setup.config.flap.probability > 0
                    ? "; link flaps come in bursts, which lose less than as many Poisson "
                      "interruptions"
                    : "");
  out << buf;
  std::snprintf(buf, sizeof buf,
                "\nsnapshot policy: %lld interruptions, lost work max %.1f s, bound %.1f s "
                "(commit gap of the plan in use, <= interval %.1f s; held at every interruption "
                "without state loss), %lld shrinks, %lld regrows, %lld state losses\n",
                r.snapshot.interruptions, r.snapshot.lost_work_s.max, r.snapshot.lost_work_bound_s,
                core::ns_to_s(setup.snapshot_interval_ns), r.snapshot.shrinks, r.snapshot.regrows,
                r.snapshot.state_losses);
  out << buf;
  if (r.slow_episodes > 0) {
    std::snprintf(buf, sizeof buf,
                  "fail-slow: %lld episodes; share of wall time lost to slowed iterations p50 "
                  "%.3f%% snapshot (%lld ranks moved to spares), %.3f%% baseline (endured)\n",
                  r.slow_episodes, 100 * r.snapshot.slow_lost.p50, r.snapshot.migrations,
                  100 * r.baseline.slow_lost.p50);
    out << buf;
  }
  if (r.snapshot.planned > 0) {
    std::snprintf(buf, sizeof buf,
                  "planned maintenance: %lld of the snapshot policy's interruptions, %lld of the "
                  "baseline's (the state saved first: no work lost)\n",
                  r.snapshot.planned, r.baseline.planned);
    out << buf;
  }
  for (const auto& n : r.snapshot.notes) out << "  " << n << "\n";
}

}  // namespace parashift::sim
