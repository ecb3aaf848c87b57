#include "sim/oracle.hpp"

#include "core/input_error.hpp"
#include "core/planner/planner.hpp"
#include "sim/sim_backend.hpp"
#include "sim/slowdowns.hpp"

namespace parashift::sim {

OracleResult oracle_at(const core::Scenario& scenario, core::TimeNs at_ns, OracleJob job) {
  // The cluster then: the truth's links, each event's degradation applied.
  topo::Topology truth = scenario.truth.topology(scenario.topology);
  std::vector<core::FaultEvent> active;
  if (scenario.faults) {
    for (const core::FaultEvent& e : scenario.faults->events) {
      const bool slowdown =
          e.kind == core::FaultEventKind::Slow || e.kind == core::FaultEventKind::Degrade ||
          e.kind == core::FaultEventKind::Background || e.kind == core::FaultEventKind::Tenant;
      if (!slowdown || at_ns < e.at_ns || (e.duration_ns && at_ns >= e.at_ns + *e.duration_ns))
        continue;
      core::FaultEvent now = e;  // active for the whole oracle iteration
      now.at_ns = 0;
      now.duration_ns.reset();
      active.push_back(std::move(now));
    }
  }
  const ClusterState state = Slowdowns(active, truth, scenario.run.seed).at(0, 0);
  for (const auto& [link, Bps] : state.link_Bps) truth.set_link_bandwidth(link, Bps);

  core::PlannerInput in = core::planner_input_of(scenario, truth);
  in.device = scenario.truth.device(scenario.device);
  for (core::DeviceGroup& g : in.device_groups) g.device = scenario.truth.device(g.device);
  in.gpu_factors = core::gpu_factors_of(state.gpu_slowdown);
  if (job.gpus > 0) in.cluster.gpus = job.gpus;  // failed GPUs gone (ranks fill the first ones)
  if (job.global_batch > 0) in.global_batch = job.global_batch;
  core::PlannerOptions options;
  options.top_k = 1;
  const core::PlanSearch found = core::search_plans(in, options);
  if (found.top.empty())
    throw core::InputError(scenario.file + ": the oracle's planner finds no plan that fits");

  core::Scenario at = scenario;
  at.plan = found.top.front().plan;
  if (at.faults) at.faults->events = active;
  SimBackend backend(at);
  // The micro-batch shares the planner's estimate assumed for slow GPUs.
  const core::SpeedBalance shares = core::balance_by_speed(
      at.plan,
      core::estimate_iteration(in.model, in.device, in.cluster, at.plan, in.seq_len, in.options),
      core::plan_gpu_factors(in, at.plan));
  if (!shares.micro_batches_per_replica.empty())
    backend.apply(core::Directive{core::RebalanceDirective{shares.micro_batches_per_replica},
                                  "oracle: micro-batches by replica speed", 0});
  OracleResult out;
  out.plan = at.plan;
  out.iteration_ns = backend.step(at.plan).iteration_ns;
  out.tokens_per_s = static_cast<double>(at.plan.global_batch) * scenario.training.seq_len /
                     core::ns_to_s(out.iteration_ns);
  return out;
}

}  // namespace parashift::sim
