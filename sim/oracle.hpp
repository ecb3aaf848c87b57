// The oracle a live re-plan is judged against (issue #16): the planner run
// offline on the cluster as it truly is at some moment (the scenario's
// hidden truth and the slowdown events active then, which the policy never
// reads), and its best plan simulated in that state. The planner sees one
// device (and the compute factor of each other device group), one link
// rate per class and each slow GPU (its plans estimated
// with micro-batches re-balanced by replica speed, core/cost/speed_balance,
// and the oracle's plan simulated with those shares); a single slow link is
// in the simulated time of the oracle's plan, not in its choice.
#pragma once

#include "core/parallel_plan.hpp"
#include "core/scenario/scenario.hpp"
#include "core/units.hpp"

namespace parashift::sim {

struct OracleResult {
  core::ParallelPlan plan;
  core::TimeNs iteration_ns = 0;
  double tokens_per_s = 0;
};

/// What the job has then: the GPUs it may use (its own that have not
/// failed, at most the plan's first count) and its global batch (a shrink
/// keeps each replica's batch, the batch module moves it). 0: the scenario's.
struct OracleJob {
  int gpus = 0;
  int global_batch = 0;
};

/// The best plan for the cluster as it is at simulated time `at_ns`, and
/// its simulated iteration there (jitter left out). Throws
/// core::InputError when no plan fits the cluster.
OracleResult oracle_at(const core::Scenario& scenario, core::TimeNs at_ns, OracleJob job = {});

}  // namespace parashift::sim
