#include "sim/faults/campaign_setup.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "core/faults/duration.hpp"
#include "core/input_error.hpp"
#include "core/scenario/cluster_view.hpp"
#include "core/snapshot/interval.hpp"

namespace parashift::sim {

PlanTimes::PlanTimes(const core::Scenario& scenario) : scenario_(scenario), backend_(scenario) {
  backend_.set_slowdowns(Slowdowns({}, scenario.topology, 0));
}

namespace {

// A simulated plan's cache key: its label and global batch.
std::string key_of(const core::ParallelPlan& plan) {
  return plan.label() + " gb" + std::to_string(plan.global_batch);
}

// Every field but dp and the global batch, and the batch per replica.
bool same_shape(const core::ParallelPlan& a, const core::ParallelPlan& b) {
  core::ParallelPlan x = a, y = b;
  x.dp = y.dp = 1;
  x.global_batch = a.global_batch / a.dp;
  y.global_batch = b.global_batch / b.dp;
  return a.global_batch % a.dp == 0 && b.global_batch % b.dp == 0 && x.label() == y.label() &&
         x.global_batch == y.global_batch;
}

}  // namespace

const core::ParallelPlan& PlanTimes::stand_in(const core::ParallelPlan& plan) {
  for (const core::ParallelPlan& p : simulated_) {
    if (p.dp >= plan.dp && plan.dp * kStandInDen >= p.dp * kStandInNum && same_shape(p, plan))
      return p;
  }
  simulated_.push_back(plan);
  return simulated_.back();
}

TimeNs PlanTimes::slowed_ns(const core::ParallelPlan& asked, int rank, double factor) {
  const core::ParallelPlan plan = stand_in(asked);
  char tail[48];
  std::snprintf(tail, sizeof tail, " gb%d x%.9g", plan.global_batch, factor);
  const std::string key = plan.label() + tail;
  if (const auto it = slowed_.find(key); it != slowed_.end()) return it->second;
  core::FaultEvent slow;
  slow.kind = core::FaultEventKind::Slow;
  slow.gpu = rank;
  slow.factor = factor;
  backend_.set_slowdowns(Slowdowns({slow}, scenario_.topology, 0));
  const TimeNs t = backend_.step(plan).iteration_ns;
  backend_.set_slowdowns(Slowdowns({}, scenario_.topology, 0));
  slowed_.emplace(key, t);
  return t;
}

TimeNs PlanTimes::remapped_ns(std::map<std::string, TimeNs>& cache, const core::ParallelPlan& asked,
                              const RemapChoice& choose) {
  const core::ParallelPlan plan = stand_in(asked);
  const std::string key = key_of(plan);
  if (const auto it = cache.find(key); it != cache.end()) return it->second;
  TimeNs t = get(plan).iteration_ns;
  // A backend of its own: the shared one keeps the plan's placement, and
  // its spares follow the plan it ran last (a shrunk one leaves GPUs idle
  // that the launch's plan runs on).
  SimBackend moved(scenario_);
  moved.set_slowdowns(Slowdowns({}, scenario_.topology, 0));
  const std::vector<core::RemapDirective> remaps = choose(moved.capabilities(), plan);
  if (!remaps.empty()) {
    for (const core::RemapDirective& r : remaps) moved.apply(core::Directive{r, "campaign", 0});
    t = moved.step(plan).iteration_ns;
  }
  cache.emplace(key, t);
  return t;
}

namespace {

// Rank 0 alone onto the first spare GPU.
std::vector<core::RemapDirective> split_remaps(const core::Capabilities& caps,
                                               const core::ParallelPlan&) {
  if (caps.spare_gpus.empty()) return {};
  return {{0, caps.spare_gpus.front()}};
}

// The first host's ranks onto the first spare host in another rack with
// room for them all.
std::vector<core::RemapDirective> off_rack_remaps(const core::Capabilities& caps,
                                                  const core::ParallelPlan& plan) {
  if (caps.place_of_gpu.empty()) return {};
  const core::GpuPlace home = caps.place_of_gpu.front();
  std::vector<int> ranks;
  for (int g = 0; g < plan.gpus(); ++g)
    if (caps.place_of_gpu[static_cast<std::size_t>(g)].host == home.host) ranks.push_back(g);
  std::map<int, std::vector<int>> spares_of_host;
  for (int g : caps.spare_gpus) {
    const core::GpuPlace& at = caps.place_of_gpu[static_cast<std::size_t>(g)];
    if (at.rack != home.rack) spares_of_host[at.host].push_back(g);
  }
  for (const auto& [host, spares] : spares_of_host) {
    if (spares.size() < ranks.size()) continue;
    std::vector<core::RemapDirective> out;
    for (std::size_t i = 0; i < ranks.size(); ++i) out.push_back({ranks[i], spares[i]});
    return out;
  }
  return {};
}

}  // namespace

TimeNs PlanTimes::split_ns(const core::ParallelPlan& plan) {
  return remapped_ns(split_, plan, split_remaps);
}

TimeNs PlanTimes::off_rack_ns(const core::ParallelPlan& plan) {
  return remapped_ns(off_rack_, plan, off_rack_remaps);
}

PlanTiming PlanTimes::get(const core::ParallelPlan& asked) {
  const core::ParallelPlan plan = stand_in(asked);
  const std::string key = key_of(plan);
  if (const auto it = cache_.find(key); it != cache_.end()) return it->second;
  const core::StepReport report = backend_.step(plan);
  const IterationResult& r = backend_.last_result();
  PlanTiming t;
  t.iteration_ns = report.iteration_ns;
  t.training_share = training_share(r);
  t.snapshot_window_ns = snapshot_window_ns(r);
  cache_.emplace(key, t);
  return t;
}

namespace {

// Iterations per interval: the interval rounded to whole iterations, >= 1.
int every_of(double interval_s, TimeNs iteration_ns) {
  return std::max(1, static_cast<int>(std::llround(interval_s / core::ns_to_s(iteration_ns))));
}

constexpr TimeNs kNsPerDs = core::kNsPerS / 10;

std::string seconds_text(TimeNs t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f s", core::ns_to_s(t));
  return buf;
}

}  // namespace

std::unique_ptr<CampaignSetup> make_campaign_setup(const core::Scenario& scenario,
                                                   const core::FaultConfig& config) {
  auto s = std::make_unique<CampaignSetup>();
  s->scenario = &scenario;
  s->config = config;
  const topo::Topology& topology = scenario.topology;
  s->slots = make_cluster_slots(topology, config.spares, config.hosts_per_rack);
  s->targets = failure_targets(s->slots, topology);
  s->failures_per_hour = failures_per_hour(config, s->targets);
  const double mtbf_s = mtbf_s_of(s->failures_per_hour);

  s->times = std::make_unique<PlanTimes>(scenario);
  s->nominal = s->times->get(scenario.plan);
  s->state = core::rank_state(scenario.model, scenario.plan, scenario.training.seq_len);

  s->snapshot_stall_ns =
      config.snapshot.stall_ns(s->state.total_bytes(), s->nominal.snapshot_window_ns);
  s->replication_ns =
      replication_ns(topology, s->slots, s->state.total_bytes(), config.snapshot.replicas,
                     config.snapshot.domain, s->nominal.training_share);
  const TimeNs it = s->nominal.iteration_ns;
  s->snapshot_interval_auto = !config.snapshot.interval_ns.has_value();
  s->snapshot_interval_ns =
      config.snapshot.interval_ns
          ? *config.snapshot.interval_ns
          : every_of(core::daly_interval_s(core::ns_to_s(s->snapshot_stall_ns), mtbf_s), it) * it;
  const core::SnapshotCadence cadence =
      core::snapshot_cadence(s->snapshot_interval_ns, it, s->replication_ns);
  if (!cadence.feasible) {
    if (!s->snapshot_interval_auto) {
      // Rounded up to 0.1 s: a value the user can write back.
      const TimeNs least = (cadence.commit_gap_ns + kNsPerDs - 1) / kNsPerDs;
      char least_text[32];
      std::snprintf(least_text, sizeof least_text, "%lld.%llds", static_cast<long long>(least / 10),
                    static_cast<long long>(least % 10));
      throw core::InputError(config.snapshot.interval_where + ": expected auto or at least " +
                             least_text + " (one snapshot per " + seconds_text(cadence.every * it) +
                             " of training, committed " + seconds_text(s->replication_ns) +
                             " later after replication, so lost work stays within the "
                             "interval), found " +
                             core::format_duration_text(s->snapshot_interval_ns));
    }
    s->snapshot_interval_ns = cadence.commit_gap_ns;
  }
  s->snapshot_every = static_cast<int>(cadence.every);
  s->snapshot_cadence_ns = cadence.every * it;
  s->commit_gap_ns = cadence.commit_gap_ns;

  s->checkpoint_bytes = core::checkpoint_bytes(s->state, scenario.plan);
  s->checkpoint_write_ns = core::transfer_ns(s->checkpoint_bytes, config.baseline.storage_Bps);
  s->checkpoint_every = every_of(
      core::checkpoint_interval_s(config.baseline, core::ns_to_s(s->checkpoint_write_ns), mtbf_s),
      s->nominal.iteration_ns);
  s->checkpoint_interval_ns = s->checkpoint_every * s->nominal.iteration_ns;

  s->planner_base = core::planner_input_of(scenario, topology);
  s->restore = std::make_unique<RestoreTimer>(topology, s->slots, config.snapshot.host_copy_Bps);
  return s;
}

TimeNs baseline_restart_ns(const CampaignSetup& setup) {
  return setup.config.heartbeat_timeout_ns + setup.config.baseline.restart_ns +
         setup.checkpoint_write_ns;
}

}  // namespace parashift::sim
