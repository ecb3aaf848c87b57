// The GPU slots a campaign manages: the topology's GPUs plus `spares` spare
// GPUs on spare hosts outside the training topology. Spare hosts are spread
// evenly over the racks; a spare host of rack r is cabled like rack r's
// hosts (flows to it are timed on the links of a host of that rack).
#pragma once

#include <optional>
#include <vector>

#include "core/faults/fault_config.hpp"
#include "core/snapshot/failure_domains.hpp"
#include "core/snapshot/remap.hpp"
#include "topologies/topology.hpp"

namespace parashift::sim {

struct ClusterSlots {
  int topology_gpus = 0;
  int topology_hosts = 0;
  int gpus_per_host = 1;
  std::vector<int> host_of_gpu;                // every slot
  std::vector<int> local_of_gpu;               // index on its host
  std::vector<std::vector<int>> gpus_of_host;  // every host, spare hosts last
  core::FailureDomains domains;                // racks, spare hosts included
  std::vector<int> spare_gpus;                 // the initial pool, ascending

  int gpus() const { return static_cast<int>(host_of_gpu.size()); }
  int hosts() const { return static_cast<int>(gpus_of_host.size()); }
  core::GpuPlace place_of(int gpu) const;
};

ClusterSlots make_cluster_slots(const topo::Topology& topology, int spares,
                                std::optional<int> hosts_per_rack);

struct FailureTargets;
/// What can fail in a campaign over `slots` of `topology`: every GPU slot
/// (spares included) with its NIC, every host, rack and fabric cable.
FailureTargets failure_targets(const ClusterSlots& slots, const topo::Topology& topology);
/// The whole cluster's failures an hour at `config`'s rates over `targets`
/// (every kind; a NIC per GPU slot).
double failures_per_hour(const core::FaultConfig& config, const FailureTargets& targets);
/// The job's mean time between failures at that rate; 1e12 s for none.
inline double mtbf_s_of(double failures_per_hour) {
  return failures_per_hour > 0 ? 3600.0 / failures_per_hour : 1e12;
}

/// The topology with the slots' spare hosts in the graph, each a copy of the
/// first host of its rack (how the campaign times flows to it), for the
/// simulator to run ranks on. A last spare host holding fewer than
/// gpus_per_host spares is a whole host: its extra GPUs are not spares.
topo::Topology topology_with_spares(const topo::Topology& topology, const ClusterSlots& slots);

}  // namespace parashift::sim
