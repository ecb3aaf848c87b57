#include "sim/sim_backend.hpp"

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <stdexcept>
#include <utility>
#include <variant>

#include "core/convergence/noise_scale.hpp"
#include "core/cost/memory.hpp"
#include "core/cost/replan_cost.hpp"
#include "core/input_error.hpp"
#include "core/rank_layout.hpp"
#include "core/snapshot/failure_domains.hpp"
#include "core/snapshot/rank_state.hpp"
#include "core/work_split.hpp"
#include "sim/resize_placement.hpp"

namespace parashift::sim {

const std::vector<core::FaultEvent>& events_of(const core::Scenario& s) {
  static const std::vector<core::FaultEvent> none;
  return s.faults ? s.faults->events : none;
}

namespace {

std::optional<int> hosts_per_rack(const core::Scenario& s) {
  return s.faults ? s.faults->hosts_per_rack : std::nullopt;
}

// The simulated cluster when it differs from the scenario's topology: the
// spare hosts added, the truth's link rates applied, or links to fail.
std::optional<topo::Topology> own_topology(const core::Scenario& s, const ClusterSlots& slots) {
  const bool truth_links =
      s.truth.intra_node_bandwidth != 1.0 || s.truth.inter_node_bandwidth != 1.0;
  bool links_fail = s.faults && s.faults->rates.link_mtbf_hours > 0;  // drawn cable failures
  for (const core::FaultEvent& e : events_of(s))
    links_fail =
        links_fail || (e.kind == core::FaultEventKind::Fail && e.target == core::FailureKind::Link);
  if (slots.spare_gpus.empty() && !truth_links && !links_fail) return {};
  topo::Topology base =
      slots.spare_gpus.empty() ? s.topology : topology_with_spares(s.topology, slots);
  return truth_links ? s.truth.topology(base) : base;
}

}  // namespace

SimBackend::SimBackend(const core::Scenario& scenario)
    : scenario_(scenario),
      slots_(make_cluster_slots(scenario.topology, scenario.faults ? scenario.faults->spares : 0,
                                hosts_per_rack(scenario))),
      own_topology_(own_topology(scenario, slots_)),
      truth_device_(scenario.truth.device(scenario.device)),
      paths_(own_topology_ ? *own_topology_ : scenario.topology),
      slowdowns_(events_of(scenario), paths_.topology(), scenario.run.seed) {
  for (core::DeviceGroup g : scenario.device_groups) {
    g.device = scenario.truth.device(g.device);
    truth_groups_.push_back(std::move(g));
  }
  const topo::Topology& t = paths_.topology();
  const core::FailureDomains& domains = slots_.domains;
  // A last spare host only partly spare: its other GPUs hold no rank and are
  // no spare (out of the pool from the start, as failed ones are).
  dead_.assign(static_cast<std::size_t>(t.gpu_count()), false);
  repair_at_.assign(static_cast<std::size_t>(t.gpu_count()), 0);
  up_since_.assign(static_cast<std::size_t>(t.gpu_count()), 0);
  for (int g = 0; g < t.gpu_count(); ++g) {
    const int host = t.host_of_gpu(g);
    place_of_gpu_.push_back({host, domains.rack_of_host[static_cast<std::size_t>(host)]});
    if (g >= slots_.gpus()) dead_[static_cast<std::size_t>(g)] = true;
  }
  read_failures();
  init_holdings();
}

std::vector<int> SimBackend::placement(int ranks) const {
  std::vector<int> out(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) out[static_cast<std::size_t>(r)] = gpu_of_rank(r);
  return out;
}

void SimBackend::set_placement(std::vector<int> gpu_of_rank) {
  std::vector<bool> own(dead_.size(), false);
  for (int g : gpu_of_rank) own[static_cast<std::size_t>(g)] = true;
  for (std::size_t g = 0; g < dead_.size(); ++g) dead_[g] = dead_[g] || !own[g];
  gpu_of_rank_ = std::move(gpu_of_rank);
  last_key_.reset();
}

core::Capabilities SimBackend::capabilities() const {
  core::Capabilities caps;
  caps.live_repartition = true;
  caps.snapshots_to_host = true;
  caps.link_telemetry = scenario_.run.contention;
  caps.live_replan = true;
  caps.ranks = scenario_.plan.gpus();  // the job's ranks (the cluster may hold more GPUs)
  // Where the ranks run and what is spare: every GPU no rank runs on.
  const topo::Topology& t = paths_.topology();
  // The ranks the next step runs: a re-plan applied before it may have
  // changed their number (gpu_of_rank_ then holds the new placement).
  const int ranks =
      gpu_of_rank_.empty() ? plan_now().gpus() : static_cast<int>(gpu_of_rank_.size());
  std::vector<bool> busy(static_cast<std::size_t>(t.gpu_count()), false);
  for (int r = 0; r < ranks && r < t.gpu_count(); ++r) {
    caps.gpu_of_rank.push_back(gpu_of_rank(r));
    busy[static_cast<std::size_t>(gpu_of_rank(r))] = true;
  }
  for (int g = 0; g < t.gpu_count(); ++g)
    if (!busy[static_cast<std::size_t>(g)] && !dead_[static_cast<std::size_t>(g)])
      caps.spare_gpus.push_back(g);
  caps.place_of_gpu = place_of_gpu_;
  caps.back_at_ns.assign(dead_.size(), 0);
  for (std::size_t g = 0; g < dead_.size(); ++g)
    if (dead_[g]) caps.back_at_ns[g] = repair_at_[g] > 0 ? repair_at_[g] : -1;
  caps.ring_routes = ring_routes();
  if (scenario_.faults) caps.snapshot_holdings = [this] { return snapshot_holdings(); };
  return caps;
}

// Busy time per communication group, named as the hw executor names them:
// a worker's tensor- and context-parallel collectives, a pipeline's sends
// (its busiest stage), a data-parallel group's gradient sync.
std::vector<core::GroupComm> group_comm(const IterationResult& result,
                                        const core::ParallelPlan& plan) {
  std::vector<core::GroupComm> out;
  auto at = [&](int stage, int replica, int cp) -> const WorkerStats& {
    return result.workers[static_cast<std::size_t>(cp + plan.cp * (replica + plan.dp * stage))];
  };
  auto cp_part = [&](int c) { return plan.cp > 1 ? ", cp " + std::to_string(c) : std::string(); };
  for (int s = 0; s < plan.pp; ++s)
    for (int d = 0; d < plan.dp; ++d)
      for (int c = 0; c < plan.cp; ++c) {
        const std::string where =
            "[stage " + std::to_string(s) + ", replica " + std::to_string(d) + cp_part(c) + "]";
        if (plan.tp > 1) out.push_back({"tp" + where, "all_reduce", at(s, d, c).tp_comm_ns, 0});
        if (plan.cp > 1) out.push_back({"cp" + where, "ring_exchange", at(s, d, c).cp_comm_ns, 0});
      }
  for (int d = 0; d < plan.dp && plan.pp > 1; ++d)
    for (int c = 0; c < plan.cp; ++c) {
      core::GroupComm g{"pp[replica " + std::to_string(d) + cp_part(c) + "]", "send_recv", 0, 0};
      for (int s = 0; s < plan.pp; ++s) g.busy_ns = std::max(g.busy_ns, at(s, d, c).pp_send_ns);
      out.push_back(g);
    }
  for (int s = 0; s < plan.pp && plan.dp > 1; ++s)
    for (int c = 0; c < plan.cp; ++c)
      out.push_back({"dp[stage " + std::to_string(s) + cp_part(c) + "]",
                     plan.optimizer_sharding == core::OptimizerSharding::None
                         ? "all_reduce"
                         : "reduce_scatter+all_gather",
                     result.dp_group_busy_ns[static_cast<std::size_t>(c + plan.cp * s)], 0});
  return out;
}

const core::FaultConfig& SimBackend::fault_config() const {
  static const core::FaultConfig defaults;
  return scenario_.faults ? *scenario_.faults : defaults;
}

core::SnapshotConfig SimBackend::snapshot_config() const {
  return scenario_.faults ? scenario_.faults->snapshot : core::SnapshotConfig{};
}

double SimBackend::rank_state_bytes() const {
  return core::rank_state(scenario_.model, plan_now(), scenario_.training.seq_len).total_bytes();
}

TimeNs SimBackend::snapshot_copy_ns() const {
  return snapshot_config().host_copy_ns(rank_state_bytes());
}

core::StepReport SimBackend::step(const core::ParallelPlan& plan) {
  IterationInput input;
  core::WorkProfile profile;
  if (auto failed = begin_step(plan, input, profile)) return std::move(*failed);
  if (input.plan == nullptr) return end_step(plan, std::nullopt);  // unchanged: reused
  return end_step(plan, simulate_iteration(input, profile, paths_));
}

std::optional<core::StepReport> SimBackend::begin_step(const core::ParallelPlan& plan,
                                                       IterationInput& input,
                                                       core::WorkProfile& profile) {
  std::vector<core::FailureSeen> failures = gpu_failures_due();
  if (auto failure = kill_due()) {
    // The rank's process is gone before the iteration starts: nothing runs.
    // A restore after it waits for the detection and the ranks' restart.
    failed_ = true;
    failures.push_back(std::move(*failure));
  }
  // Ranks left on failed GPUs wait for the repair, unless a failure cuts the wait short.
  while (failures.empty() && wait_for_repairs(plan.gpus())) failures = gpu_failures_due();
  if (!failures.empty()) {
    core::StepReport report;
    report.iteration = iteration_;
    report.failures = std::move(failures);
    return report;
  }
  ClusterState cluster = slowdowns_.at(now_ns_, iteration_);
  // GPUs of another device type compute at their factor on the plan's work.
  for (const core::GpuFactor& g :
       core::group_factors(truth_groups_, scenario_.model, truth_device_, plan,
                           scenario_.training.seq_len, core::CostOptions{})) {
    if (cluster.gpu_slowdown.empty())
      cluster.gpu_slowdown.assign(static_cast<std::size_t>(paths_.topology().gpu_count()), 1.0);
    cluster.gpu_slowdown[static_cast<std::size_t>(g.gpu)] *= g.factor;
  }
  Key key{plan.label(),
          plan.global_batch,
          layers_per_virtual_stage_,
          micro_batches_per_replica_,
          gpu_of_rank_,
          cluster,
          links_down_,
          replication_left_bytes_,
          dp_orders_};
  if (reuse_ && last_key_ && *last_key_ == key) return std::nullopt;  // input.plan stays null
  if (!last_key_ || !(last_key_->cluster.link_Bps == cluster.link_Bps)) {
    paths_.set_link_overrides(cluster.link_Bps);
  }
  input = IterationInput{};
  input.model = &scenario_.model;
  input.device = &truth_device_;
  input.plan = &plan;
  input.seq_len = scenario_.training.seq_len;
  input.layers_per_virtual_stage = layers_per_virtual_stage_;
  input.micro_batches_per_replica = micro_batches_per_replica_;
  input.gpu_slowdown = cluster.gpu_slowdown;
  input.gpu_of_rank = gpu_of_rank_;
  input.dp_orders = dp_orders_;
  input.network = scenario_.run.contention ? NetworkModel::MaxMin : NetworkModel::Path;
  input.nccl_algo = scenario_.nccl_algo;
  input.traffic = scenario_.traffic;
  input.tenant_links = cluster.tenant_links;
  if (replication_left_bytes_ > 0) input.snapshot_pairs = replication_pairs_;
  input.snapshot_bytes_left = replication_left_bytes_;
  input.trace = trace_;
  profile = profile_override_ ? *profile_override_
                              : core::work_profile(scenario_.model, truth_device_, plan,
                                                   scenario_.training.seq_len);
  last_profile_ = profile;
  last_key_ = std::move(key);
  ++simulated_;
  return std::nullopt;
}

core::StepReport SimBackend::end_step(const core::ParallelPlan& plan,
                                      std::optional<IterationResult> result) {
  if (result) last_ = std::move(*result);
  last_plan_ = plan;
  now_ns_ -= std::exchange(ahead_ns_, 0);  // a wait's time is in pending_move_ns_
  restore_cut_short_ = false;
  core::StepReport report;
  report.iteration = iteration_++;
  report.iteration_ns = last_->iteration_ns + pending_move_ns_;
  count_replication(now_ns_ + pending_move_ns_);
  pending_move_ns_ = 0;
  report.applied = std::exchange(pending_applied_, {});
  now_ns_ += report.iteration_ns;
  write_remote_checkpoints();
  repairs_due(now_ns_);  // GPUs back by the end of the iteration are free for the next
  const core::RankLayout layout(plan);
  const int ranks = layout.ranks();
  report.rank_compute_ns.resize(ranks);
  report.rank_optimizer_ns.resize(ranks);
  report.rank_exposed_comm_ns.resize(ranks);
  report.rank_peak_memory_bytes.resize(ranks);
  const auto& slow = last_key_->cluster.gpu_slowdown;
  for (int r = 0; r < ranks; ++r) {
    const auto c = layout.coord(r);
    const WorkerStats& w = last_->workers[c.cp + plan.cp * (c.dp + plan.dp * c.pp)];
    // A GPU's own kernels: the group runs at its slowest member's pace, but
    // each GPU's kernel time (what a profiler measures) scales with its own speed.
    const double own = slow.empty() ? 1.0 : slow[static_cast<std::size_t>(gpu_of_rank(r))];
    report.rank_compute_ns[r] =
        static_cast<TimeNs>(static_cast<double>(w.compute_ns) / w.slowdown * own);
    report.rank_optimizer_ns[r] = w.optimizer_ns;  // simulated at the device's pace
    report.rank_exposed_comm_ns[r] = w.tp_comm_ns + w.cp_comm_ns + w.dp_exposed_ns;
    report.rank_peak_memory_bytes[r] = w.static_bytes + w.peak_activation_bytes;
  }
  report.comm = group_comm(*last_, plan);
  if (const auto& c = scenario_.convergence) {
    // The gradient noise scale where training is now (the trace, in
    // sequences), the norms this step's replicas and reduction measure
    // (with more than one replica), and the progress the step makes
    // (core/convergence).
    const double noise_scale = c->trace.at(progress_steps_ / c->target_steps) /
                               static_cast<double>(scenario_.training.seq_len);
    if (plan.dp > 1) {
      const int replica_batch = plan.global_batch / plan.dp;
      const core::MeasuredNorms m =
          core::measured_norms(noise_scale, replica_batch, plan.dp, plan.global_batch,
                               c->measurement_noise, scenario_.run.seed, report.iteration);
      report.gradients = core::GradientNorms{m.replica_sq_norm, replica_batch, m.global_sq_norm,
                                             plan.global_batch};
    }
    progress_steps_ += core::step_progress(plan.global_batch, noise_scale);
  }
  const double iteration_s = core::ns_to_s(last_->iteration_ns);
  for (const LinkUse& use : last_->links) {
    report.links.push_back({paths_.topology().link(use.link).name, use.bytes,
                            core::ns_to_s(use.busy_ns) / iteration_s, use.foreign_bytes,
                            paths_.link_Bps(use.link),
                            paths_.topology().link(use.link).bandwidth_Bps});
  }
  return report;
}

// Moving layers between stages moves their weights, gradients and optimizer
// state: the boundary after virtual stage g carries |new - old| cumulative
// layers, each params_per_gpu_layer x core::resident_bytes_per_param on every GPU,
// every tensor rank on its own rail and every replica at once. All
// boundaries move in parallel: the slowest one is the delay.
TimeNs SimBackend::repartition_move_ns(const std::vector<int>& from, const std::vector<int>& to,
                                       const core::ParallelPlan& plan) const {
  const core::RankLayout layout(plan);
  TimeNs slowest = 0;
  int before = 0, after = 0;
  for (std::size_t g = 0; g + 1 < from.size() && g + 1 < to.size(); ++g) {
    before += from[g];
    after += to[g];
    const int layers = std::abs(after - before);
    if (layers == 0) continue;
    const double bytes =
        layers * last_profile_.params_per_gpu_layer * core::resident_bytes_per_param(plan);
    const int a = layout.rank({0, 0, 0, static_cast<int>(g) % plan.pp});
    const int b = layout.rank({0, 0, 0, static_cast<int>(g + 1) % plan.pp});
    slowest = std::max(slowest, paths_.transfer_ns(a, b, bytes));
  }
  return slowest;
}

std::vector<int> SimBackend::layers_per_virtual_stage(const core::ParallelPlan& plan) const {
  return layers_per_virtual_stage_.empty()
             ? core::even_split(scenario_.model.layers, plan.pp * plan.virtual_stages)
             : layers_per_virtual_stage_;
}

std::vector<int> SimBackend::micro_batches_per_replica(const core::ParallelPlan& plan) const {
  return micro_batches_per_replica_.empty() ? std::vector<int>(plan.dp, plan.micro_batches())
                                            : micro_batches_per_replica_;
}

void SimBackend::apply(const core::Directive& directive) {
  if (std::holds_alternative<core::RestoreDirective>(directive.action) &&
      std::exchange(restore_cut_short_, false))
    supersede_restore();
  const TimeNs before_ns = pending_move_ns_;
  apply_action(directive);
  pending_applied_.push_back({core::kind_name(directive.action), pending_move_ns_ - before_ns});
}

void SimBackend::apply_action(const core::Directive& directive) {
  if (const auto* d = std::get_if<core::RepartitionDirective>(&directive.action)) {
    if (last_plan_) {
      pending_move_ns_ += repartition_move_ns(layers_per_virtual_stage(*last_plan_),
                                              d->layers_per_stage, *last_plan_);
    }
    layers_per_virtual_stage_ = d->layers_per_stage;
    return;
  }
  if (const auto* d = std::get_if<core::RebalanceDirective>(&directive.action)) {
    if (last_plan_) {
      const int total = std::accumulate(d->micro_batches.begin(), d->micro_batches.end(), 0);
      if (static_cast<int>(d->micro_batches.size()) != last_plan_->dp ||
          total * last_plan_->micro_batch != last_plan_->global_batch) {
        throw core::InputError("rebalance must give each of the " + std::to_string(last_plan_->dp) +
                               " replicas micro-batches summing to the global batch");
      }
    }
    micro_batches_per_replica_ = d->micro_batches;
    return;
  }
  // A snapshot stalls every rank for the device -> host copy of its state
  // (the most loaded rank's, core::rank_state) before the next iteration;
  // replication to peer hosts runs on under training, as in the fault
  // campaigns (sim/faults). A restore copies the same state back; after a
  // lost rank (killed, or its GPU failed) it first waits for the detection
  // (faults.heartbeat_timeout) and the ranks' restart (faults.reinit, unless
  // a shrink's re-plan just paid for rebuilding the communicators).
  if (const auto* d = std::get_if<core::SnapshotDirective>(&directive.action)) {
    // The copy runs under the next iteration, which runs as the last did
    // (core::SnapshotConfig::stall_ns).
    pending_move_ns_ +=
        snapshot_config().stall_ns(rank_state_bytes(), last_ ? snapshot_window_ns(*last_) : 0);
    snapshots_.push_back(d->version);
    hold_version(d->version);
    start_replication(d->version);
    return;
  }
  if (const auto* d = std::get_if<core::RestoreDirective>(&directive.action)) {
    if (d->from_remote
            ? d->version != remote_version_
            : std::find(snapshots_.begin(), snapshots_.end(), d->version) == snapshots_.end())
      throw std::invalid_argument(
          "restore v" + std::to_string(d->version) +
          (d->from_remote ? ": the remote checkpoint holds v" + std::to_string(remote_version_)
                          : ": the simulator took no such snapshot"));
    // From host memory, or the whole state back from remote storage.
    pending_move_ns_ += d->from_remote ? checkpoint_read_ns_ : snapshot_copy_ns();
    iteration_ = d->version;      // the snapshot's iteration runs next
    replication_left_bytes_ = 0;  // the restart ends a replication in flight
    replication_alone_ns_ = replication_due_ns_ = -1;
    replicating_version_ = -1;
    restored(d->version, d->from_remote);
    const core::FaultConfig& f = fault_config();
    if (std::exchange(failed_, false)) {
      // A shrink's re-plan before the restore already rebuilt the communicators.
      // A restart from the remote checkpoint is the baseline's full restart.
      pending_move_ns_ += f.heartbeat_timeout_ns + (d->from_remote ? f.baseline.restart_ns
                                                    : replanned_   ? 0
                                                                   : f.reinit_ns);
    } else if (moved_) {
      // A live rank moved (off a slow GPU): no detection, but its restart.
      pending_move_ns_ += f.reinit_ns;
    }
    moved_ = false;
    replanned_ = false;
    return;
  }
  // A re-plan stops the job while every GPU fetches its new shard of the
  // state over the cluster as it is now (its NIC, to a GPU of the next
  // host) and the communicators are rebuilt (faults.reinit), by the one
  // formula the policy estimates it with (core/cost/replan_cost.hpp).
  if (const auto* d = std::get_if<core::ReplanDirective>(&directive.action)) {
    if (last_plan_) {
      const topo::Topology& t = paths_.topology();
      const int peer = t.host_count() > 1 ? t.gpus_per_host() : std::min(1, t.gpu_count() - 1);
      const TimeNs rebuild_ns = fault_config().reinit_ns;
      pending_move_ns_ +=
          core::replan_cost(scenario_.model, *last_plan_, d->plan, scenario_.training.seq_len,
                            rebuild_ns,
                            [&](double bytes) { return paths_.transfer_ns(0, peer, bytes); })
              .total_ns();
    }
    replanned_ = failed_;
    const core::ParallelPlan& was = plan_now();  // other groups: their rings in order
    if (was.tp != d->plan.tp || was.pp != d->plan.pp || was.dp != d->plan.dp ||
        was.cp != d->plan.cp)
      dp_orders_.clear();
    layers_per_virtual_stage_.clear();  // the next step() takes the new plan
    micro_batches_per_replica_.clear();
    // Ranks keep their GPUs while their number does; another number of
    // ranks keeps the whole replicas' GPUs where the shape stays
    // (sim::resize_placement, as the fault campaigns place them).
    const int ranks = was.gpus();
    if (ranks != d->plan.gpus()) {
      std::vector<int> next = resize_placement(was, placement(ranks), d->plan, dead_);
      if (next.empty())
        throw std::invalid_argument(
            "replan to " + d->plan.label() + ": " + std::to_string(d->plan.gpus()) + " ranks, " +
            std::to_string(std::count(dead_.begin(), dead_.end(), false)) + " GPUs left");
      gpu_of_rank_ = std::move(next);
    }
    // The plan the next step runs: what a remap or rebalance applied before
    // it (a failure's recovery, when that step fails) is checked against.
    last_plan_ = d->plan;
    return;
  }
  // A rank moved onto another GPU (a spare, after its own failed): from the
  // next step its group's collectives and sends take that GPU's paths and
  // its compute that GPU's speed, simulated once. The move itself costs
  // nothing here: the state arrives by the restore that follows it (which
  // charges the restart: after a failure with its detection, after a live
  // move without).
  if (const auto* d = std::get_if<core::RemapDirective>(&directive.action)) {
    const int ranks = plan_now().gpus();
    const int gpus = paths_.topology().gpu_count();
    const std::string what =
        "remap rank " + std::to_string(d->rank) + " to gpu " + std::to_string(d->spare_gpu);
    if (d->rank < 0 || d->rank >= ranks)
      throw std::invalid_argument(what + ": the job has ranks 0.." + std::to_string(ranks - 1));
    if (d->spare_gpu < 0 || d->spare_gpu >= gpus)
      throw std::invalid_argument(what + ": the cluster has gpus 0.." + std::to_string(gpus - 1));
    if (dead_[static_cast<std::size_t>(d->spare_gpu)])
      throw std::invalid_argument(what + ": that gpu failed");
    if (gpu_of_rank_.empty()) gpu_of_rank_ = placement(ranks);
    for (int r = 0; r < ranks; ++r)
      if (r != d->rank && gpu_of_rank_[static_cast<std::size_t>(r)] == d->spare_gpu)
        throw std::invalid_argument(what + ": rank " + std::to_string(r) + " runs there");
    moved_ = moved_ || gpu_of_rank_[static_cast<std::size_t>(d->rank)] != d->spare_gpu;
    gpu_of_rank_[static_cast<std::size_t>(d->rank)] = d->spare_gpu;
    return;
  }
  if (const auto* d = std::get_if<core::ReorderDirective>(&directive.action)) {
    reorder(*d);
    return;
  }
  throw std::invalid_argument(std::string("the simulator backend does not apply '") +
                              core::kind_name(directive.action) + "' directives yet");
}

}  // namespace parashift::sim
