#include "sim/faults/campaign_setup.hpp"

#include <algorithm>
#include <cmath>

#include "core/scenario/cluster_view.hpp"
#include "core/snapshot/interval.hpp"

namespace parashift::sim {

PlanTiming PlanTimes::get(const core::ParallelPlan& plan) {
  const std::string key = plan.label() + " gb" + std::to_string(plan.global_batch);
  if (const auto it = cache_.find(key); it != cache_.end()) return it->second;
  const core::StepReport report = backend_.step(plan);
  const IterationResult& r = backend_.last_result();
  PlanTiming t;
  t.iteration_ns = report.iteration_ns;
  t.training_share = std::clamp(
      static_cast<double>(r.dp_sync_ns) / static_cast<double>(std::max<TimeNs>(1, r.iteration_ns)),
      0.0, 0.95);
  cache_.emplace(key, t);
  return t;
}

namespace {

// Iterations per interval: the interval rounded to whole iterations, >= 1.
int every_of(double interval_s, TimeNs iteration_ns) {
  return std::max(1, static_cast<int>(std::llround(interval_s / core::ns_to_s(iteration_ns))));
}

}  // namespace

std::unique_ptr<CampaignSetup> make_campaign_setup(const core::Scenario& scenario,
                                                   const core::FaultConfig& config) {
  auto s = std::make_unique<CampaignSetup>();
  s->scenario = &scenario;
  s->config = config;
  const topo::Topology& topology = scenario.topology;
  s->slots = make_cluster_slots(topology, config.spares, config.hosts_per_rack);
  s->targets.gpus = s->slots.gpus();
  s->targets.hosts = s->slots.hosts();
  s->targets.fabric_links = fabric_links(topology);
  s->failures_per_hour =
      config.failures_per_hour(s->targets.gpus, s->targets.hosts, s->targets.gpus,
                               static_cast<int>(s->targets.fabric_links.size()));
  const double mtbf_s = s->failures_per_hour > 0 ? 3600.0 / s->failures_per_hour : 1e12;

  s->times = std::make_unique<PlanTimes>(scenario);
  s->nominal = s->times->get(scenario.plan);
  s->state = core::rank_state(scenario.model, scenario.plan, scenario.training.seq_len);

  s->snapshot_stall_ns = core::transfer_ns(s->state.total_bytes(), config.snapshot.host_copy_Bps);
  s->replication_ns =
      replication_ns(topology, s->slots, s->state.total_bytes(), config.snapshot.replicas,
                     config.snapshot.domain, s->nominal.training_share);
  const double snapshot_interval_s =
      config.snapshot.interval_ns
          ? core::ns_to_s(*config.snapshot.interval_ns)
          : core::daly_interval_s(core::ns_to_s(s->snapshot_stall_ns), mtbf_s);
  s->snapshot_every = every_of(snapshot_interval_s, s->nominal.iteration_ns);
  // A snapshot is replicated before the next one starts.
  const auto min_every =
      static_cast<int>((s->replication_ns + s->nominal.iteration_ns - 1) / s->nominal.iteration_ns);
  s->snapshot_every = std::max(s->snapshot_every, min_every);
  s->snapshot_interval_ns = s->snapshot_every * s->nominal.iteration_ns;

  s->checkpoint_bytes = core::checkpoint_bytes(s->state, scenario.plan);
  s->checkpoint_write_ns = core::transfer_ns(s->checkpoint_bytes, config.baseline.storage_Bps);
  const double checkpoint_interval_s =
      config.baseline.checkpoint_interval_ns
          ? core::ns_to_s(*config.baseline.checkpoint_interval_ns)
          : core::daly_interval_s(core::ns_to_s(s->checkpoint_write_ns), mtbf_s);
  s->checkpoint_every = every_of(checkpoint_interval_s, s->nominal.iteration_ns);
  s->checkpoint_interval_ns = s->checkpoint_every * s->nominal.iteration_ns;

  s->planner_base.model = scenario.model;
  s->planner_base.device = scenario.device;
  s->planner_base.cluster = core::cluster_view_of(topology, scenario.device);
  s->planner_base.global_batch = scenario.training.global_batch;
  s->planner_base.seq_len = scenario.training.seq_len;
  s->planner_base.precision = scenario.training.precision;
  s->restore = std::make_unique<RestoreTimer>(topology, s->slots, config.snapshot.host_copy_Bps);
  return s;
}

}  // namespace parashift::sim
