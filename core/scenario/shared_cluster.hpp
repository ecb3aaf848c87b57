// A shared cluster: several training jobs on one topology (a scenario with
// `jobs:`), each with its model, training and plan on its own nodes, their
// traffic sharing the cluster's links (sim/shared_cluster.hpp runs them).
//
//   cluster: {device: h100-sxm-80gb, topology: ../topologies/h100-1k.dot}
//   traffic: {grad_sync: 4}        # the cluster's class weights
//   run: {iterations: 5}           # each job's, unless it gives its own
//   jobs:
//     - name: llama-8b
//       model: llama3-8b
//       training: {global_batch: 256, seq_len: 4096}
//       plan: {tp: 2, pp: 2, dp: 64}
//       placement: {first_node: 0}  # or {nodes: [0, 2, "8-15"]}; optional:
//                                   # packed after the job before
//       iterations: 10              # optional
//   tenants:                        # optional: other tenants' traffic
//     - {links: ["l0->p0", "p0->l0"], at: 2s, duration: 10s}
//   stagger: true                   # optional: start the jobs at offsets
//                                   # that interleave their traffic (sim/stagger.hpp)
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/scenario/scenario.hpp"

namespace parashift::core {

struct SharedJob {
  /// The job's name, model, training and plan; the cluster's device,
  /// topology, truth, traffic weights and run (its iterations the job's).
  Scenario scenario;
  std::vector<int> nodes;        // its nodes, in rank order
  std::vector<int> gpu_of_rank;  // rank r's GPU: node after node, each node's GPUs in order
};

/// Another tenant (`tenants:`): traffic of class `tenant` sent as fast as
/// it can on each of its links (sim/network/tenant_traffic.hpp) from `at`
/// for `duration` (or until the last job ends).
struct SharedTenant {
  std::vector<int> links;  // link ids of the topology
  TimeNs at_ns = 0;
  std::optional<TimeNs> duration_ns;
};

struct SharedCluster {
  std::string name;
  std::string file;
  std::vector<SharedJob> jobs;  // in the file's order, on disjoint GPUs
  std::vector<SharedTenant> tenants;
  bool stagger = false;  // the cluster-level stagger module (sim/stagger.hpp)
  int gpus() const { return jobs.empty() ? 0 : jobs.front().scenario.topology.gpu_count(); }
};

/// Whether `yaml_text` is a shared cluster: a map with a top-level `jobs`.
/// Malformed text is not (parse_scenario reports it).
bool is_shared_cluster(const std::string& yaml_text);

/// Reads, overrides (--set on the cluster's sections: cluster., traffic.,
/// run.), validates.
/// Every error is an InputError naming the file and field: an unknown or
/// missing field, a job whose placement leaves the cluster or overlaps
/// another job's GPUs, a plan that does not fit the job's GPUs.
SharedCluster parse_shared_cluster(const std::string& yaml_text, const std::filesystem::path& file,
                                   const std::vector<std::string>& overrides = {});

SharedCluster load_shared_cluster(const std::filesystem::path& file,
                                  const std::vector<std::string>& overrides = {});

}  // namespace parashift::core
