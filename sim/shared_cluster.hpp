// A shared cluster's run (core/scenario/shared_cluster.hpp): every job's
// iterations on one discrete-event kernel and one max-min flow network, so
// their pipeline sends and gradient syncs contend on the links they share
// (weighted by traffic class, `traffic:`), each job starting its next
// iteration when the last one ends. Each job runs its own loop
// (core::JobRunner over a SimBackend placed on its GPUs): its policy sees
// the other jobs only as what it measures: slower steps, and foreign bytes
// on the links its own flows cross (sim/link_window.hpp). Each job is also
// simulated alone on the same GPUs, so the report shows what sharing cost it.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/controller/job_runner.hpp"
#include "core/scenario/shared_cluster.hpp"
#include "sim/iteration.hpp"
#include "sim/stagger.hpp"

namespace parashift::sim {

struct SharedJobResult {
  std::vector<TimeNs> iteration_ns;  // each iteration, in order
  TimeNs alone_ns = 0;   // mean iteration of the job (its policy on) alone on the cluster
  TimeNs start_ns = 0;   // when its first iteration started (0 unless staggered)
  TimeNs end_ns = 0;     // when its last iteration ended
  IterationResult last;  // its last iteration (`links`: what the job measured on its links)
  double tokens = 0;     // trained over its iterations
  std::vector<core::TakenDirective> directives;  // its policy's, in order
  core::ParallelPlan final_plan;                 // the plan it ended on

  TimeNs mean_iteration_ns() const;
  /// Mean iteration over the iteration alone, minus 1 (0.05: 5% slower).
  double slowdown() const;
  double tokens_per_s() const { return tokens / core::ns_to_s(end_ns - start_ns); }
};

struct SharedClusterResult {
  std::vector<SharedJobResult> jobs;  // as in the scenario
  TimeNs end_ns = 0;                  // the last job's end
  std::vector<LinkUse> links;         // what each link carried over the run
  /// Links that two or more jobs use (each seen alone): where they contend.
  std::vector<int> shared_links;
  std::vector<double> tenant_bytes;    // what each of the scenario's tenants sent
  std::optional<StaggerPlan> stagger;  // with `stagger: true`: the starts and why
  std::uint64_t events = 0;

  double tokens_per_s() const;  // the jobs' rates summed (each over its own run)
};

SharedClusterResult run_shared_cluster(const core::SharedCluster& cluster);

}  // namespace parashift::sim
