#include "hw/exec/training_run.hpp"

#include <cstdio>
#include <limits>
#include <variant>

#include "core/controller/batch_policy.hpp"
#include "core/controller/sync_policy.hpp"
#include "core/input_error.hpp"
#include "hw/comm/virtual_time.hpp"
#include "hw/snapshot/snapshot_plan.hpp"

namespace parashift::hw {

double scenario_slowdown(const core::Scenario& scenario, int rank,
                         std::optional<core::TimeNs> at_ns) {
  double factor = 1.0;
  if (!scenario.faults) return factor;
  if (scenario.faults->spares > 0)
    throw core::InputError(scenario.faults->spares_where +
                           ": the executor keeps no spare GPUs beside its ranks; on hardware the "
                           "spares are nodes (run --elastic --spares N); expected 0 here, or "
                           "play it with `parashift simulate` or `faults`");
  for (const core::FaultEvent& e : scenario.faults->events) {
    if (e.kind == core::FaultEventKind::Kill) continue;              // run_training: the rank dies
    if (e.kind == core::FaultEventKind::Degrade && at_ns) continue;  // virtual_degrades
    if (e.kind != core::FaultEventKind::Slow)
      throw core::InputError(e.where + ": kind " + core::to_string(e.kind) +
                             " is not something the hw executor can do to itself (it runs slow "
                             "and kill events, and degrade with --clock virtual); play it with "
                             "`parashift simulate` or `faults`");
    if (!at_ns && (e.at_ns != 0 || e.duration_ns))
      throw core::InputError(e.where +
                             ": the hw executor runs slow events for the whole run (on the wall "
                             "clock; with --clock virtual they may start and end); expected "
                             "no 'at' and no 'duration'");
    if (at_ns && (*at_ns < e.at_ns || (e.duration_ns && *at_ns >= e.at_ns + *e.duration_ns)))
      continue;
    const bool on_rank = e.node >= 0 ? rank < scenario.topology.gpu_count() &&
                                           scenario.topology.host_of_gpu(rank) == e.node
                                     : e.gpu == rank;
    if (on_rank) factor *= e.factor;
  }
  return factor;
}

std::vector<VirtualDegrade> virtual_degrades(const core::Scenario& scenario) {
  std::vector<VirtualDegrade> out;
  if (!scenario.faults) return out;
  for (const core::FaultEvent& e : scenario.faults->events) {
    if (e.kind != core::FaultEventKind::Degrade) continue;
    VirtualDegrade d{e.at_ns, std::numeric_limits<core::TimeNs>::max(), e.fraction};
    if (e.scope.empty()) {
      // One rank-to-rank link, "r1->r2" (as the executor's reports name them).
      const int ranks = scenario.plan.gpus();
      int from = -1, to = -1, end = 0;
      const bool named = std::sscanf(e.link.c_str(), "r%d->r%d%n", &from, &to, &end) == 2 &&
                         end == static_cast<int>(e.link.size());
      if (!named || from < 0 || to < 0 || from >= ranks || to >= ranks || from == to)
        throw core::InputError(
            e.where + ": link '" + e.link +
            "': the executor's virtual time has a link from every rank to every other; expected "
            "a link r<from>->r<to> between two of its ranks 0.." +
            std::to_string(ranks - 1) + ", or scope: inter_node (or intra_node) for every link");
      d.from_rank = from;
      d.to_rank = to;
    }
    if (e.duration_ns) d.until_ns = e.at_ns + *e.duration_ns;
    out.push_back(d);
  }
  return out;
}

TrainingRunResult run_training(const core::Scenario& scenario, const TrainingRunConfig& config,
                               Communicator& world,
                               const std::function<void(const IterationRecord&)>& on_iteration) {
  HwOptions options = config.options;
  if (scenario.faults)
    for (const core::FaultEvent& e : scenario.faults->events)
      if (e.kind == core::FaultEventKind::Kill && e.rank == world.rank())
        options.kill_before_iteration = e.at_iteration;
  // On virtual time a slow event holds from its start for its duration,
  // read before each iteration at the job's time (every rank's clock is the
  // same then: the iteration ends in a world all-reduce).
  std::optional<core::TimeNs> now;
  if (options.virtual_clock != nullptr) now = options.virtual_clock->now_ns();
  const double slowdown = scenario_slowdown(scenario, world.rank(), now);
  options.gradient_norms = options.gradient_norms || scenario.policy.enabled("batch");
  // The `sync` module's compressors, measured on the ranks' real gradients
  // as often as it evaluates (it leaves out those that would send too little).
  if (const core::ModuleConfig* sync = scenario.policy.find("sync"); sync && sync->enabled) {
    const core::SyncPolicyOptions o = core::sync_policy_options(*sync);
    options.compression_probes.clear();
    for (const core::CompressionSpec& c : core::sync_compressors(o))
      if (c.enabled()) options.compression_probes.push_back(c);
    options.compression_probe_every = o.every;
  }
  if (!options.text && !scenario.training.text.empty())
    options.text =
        TextTask::load(scenario.training.text, scenario.training.seq_len, "training.text");
  HwBackend backend(scenario.model, scenario.training.seq_len, scenario.run.seed, scenario.plan,
                    options, world);
  backend.set_compute_slowdown(slowdown);
  core::JobRunner runner(backend, scenario.plan);
  runner.set_faults(scenario);
  if (config.policy_cost) {
    runner.set_policy(scenario, config.iterations, *config.policy_cost);
  } else {
    runner.set_policy(scenario, config.iterations);
  }
  TrainingRunResult result;
  if (config.restore) {
    // The newest version, of this plan's shards or, resharded, of another
    // plan's (a live re-plan's, or a relaunch on another layout: every
    // layer put together from the old shards and cut for this plan).
    const auto own = backend.newest_restorable_snapshot();
    const auto resharded = backend.newest_resharded_snapshot();
    const bool reshard = resharded && (!own || *resharded > *own);
    if (own || resharded) {
      backend.apply({core::RestoreDirective{reshard ? *resharded : *own},
                     reshard ? "relaunch: newest snapshot, resharded from another plan"
                             : "relaunch: newest restorable snapshot",
                     0});
      result.restored = backend.last_restore();
      runner.set_next_iteration(backend.iterations_done());
    } else if (const auto other = backend.other_plan_snapshot()) {
      // Starting over would silently drop the job's progress.
      std::string with;
      for (const auto& line : read_snapshot_plan(options.shm_root, options.job))
        with += " --set " + line;
      throw core::InputError("--restore: no snapshot of plan '" + scenario.plan.label() +
                             "' to restore, and no version of another plan's shards is "
                             "complete on the surviving nodes: " +
                             *other + "; the newest snapshot's plan:" +
                             (with.empty() ? std::string(" (unknown)") : with));
    } else {
      result.nothing_to_restore = true;
    }
  }
  for (const auto& r : config.repartitions)
    runner.schedule(r.before_iteration,
                    {core::RepartitionDirective{r.layers_per_stage}, "scheduled", 0});
  for (const auto& r : config.replans)
    runner.schedule(r.before_iteration, {core::ReplanDirective{r.plan}, "scheduled", 0});
  while (runner.next_iteration() < config.iterations) {
    if (options.virtual_clock != nullptr)
      backend.set_compute_slowdown(
          scenario_slowdown(scenario, world.rank(), options.virtual_clock->now_ns()));
    if (!runner.step()) break;
    IterationRecord record{backend.last_loss(), *runner.last_report()};
    if (on_iteration) on_iteration(record);
    result.iterations.push_back(std::move(record));
  }
  result.directives = runner.directives();
  result.stragglers = runner.stragglers();
  result.notes = runner.notes();
  result.failures = runner.failures();
  if (const core::Controller* c = runner.controller(); c != nullptr) {
    if (c->calibration() != nullptr) result.calibration = c->calibration()->summary();
    result.controller_wall_ns = runner.controller_wall_ns();
    if (const auto* batch = dynamic_cast<const core::BatchPolicy*>(c->module("batch"))) {
      result.noise_scale = batch->estimator().noise_scale();
      result.noise_observations = batch->estimator().observations();
    }
  }
  for (const auto& t : result.directives)
    if (const auto* s = std::get_if<core::SnapshotDirective>(&t.directive.action))
      result.snapshots.push_back(s->version);
  result.final_layers_per_stage = backend.layers_per_stage();
  result.final_plan = backend.plan();
  if (!config.keep_snapshots) backend.remove_snapshots();
  return result;
}

}  // namespace parashift::hw
