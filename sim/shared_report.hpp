// What a shared cluster's run prints and writes as JSON (sim/shared_cluster.hpp).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "core/scenario/shared_cluster.hpp"
#include "sim/shared_cluster.hpp"

namespace parashift::sim {

/// A table of the jobs (GPUs, plan, iterations, mean iteration against the
/// same job alone, tokens/s, MFU), the cluster's line, and the busiest links
/// that two or more jobs use.
void print_shared_cluster(std::ostream& out, const core::SharedCluster& cluster,
                          const SharedClusterResult& result);

/// {scenario, gpus, time_s (the last job's end), tokens_per_s (the jobs'
/// rates summed), events, jobs: [{name, model, plan, nodes, gpus,
/// iterations, final_plan, directives (how many), iteration_time_s: [...],
/// mean_iteration_time_s,
/// alone_iteration_time_s, slowdown, tokens_per_s, mfu}], shared_links:
/// [{link, bytes, busy_s}] (busiest first), tenants: [{links, bytes}]}.
nlohmann::json shared_cluster_json(const core::SharedCluster& cluster,
                                   const SharedClusterResult& result);

}  // namespace parashift::sim
