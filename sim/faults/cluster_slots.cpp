#include "sim/faults/cluster_slots.hpp"

#include "sim/faults/failure_events.hpp"

#include "topologies/spare_hosts.hpp"

namespace parashift::sim {

core::GpuPlace ClusterSlots::place_of(int gpu) const {
  const int host = host_of_gpu[static_cast<std::size_t>(gpu)];
  return core::GpuPlace{host, domains.rack_of_host[static_cast<std::size_t>(host)]};
}

ClusterSlots make_cluster_slots(const topo::Topology& topology, int spares,
                                std::optional<int> hosts_per_rack) {
  ClusterSlots s;
  s.topology_gpus = topology.gpu_count();
  s.topology_hosts = topology.host_count();
  s.gpus_per_host = topology.gpus_per_host();
  s.domains = core::failure_domains(topology, hosts_per_rack);
  s.gpus_of_host.resize(static_cast<std::size_t>(s.topology_hosts));
  for (int g = 0; g < s.topology_gpus; ++g) {
    const int h = topology.host_of_gpu(g);
    auto& on_host = s.gpus_of_host[static_cast<std::size_t>(h)];
    s.host_of_gpu.push_back(h);
    s.local_of_gpu.push_back(static_cast<int>(on_host.size()));
    on_host.push_back(g);
  }
  const int spare_hosts = (spares + s.gpus_per_host - 1) / s.gpus_per_host;
  const int racks = s.domains.racks();
  for (int i = 0; i < spare_hosts; ++i) {
    // Evenly spread: spare host i in rack floor(i * racks / spare_hosts).
    const int host =
        s.domains.add_host(static_cast<int>(static_cast<long long>(i) * racks / spare_hosts));
    s.gpus_of_host.emplace_back();
    for (int l = 0; l < s.gpus_per_host && s.gpus() < s.topology_gpus + spares; ++l) {
      const int g = s.gpus();
      s.host_of_gpu.push_back(host);
      s.local_of_gpu.push_back(l);
      s.gpus_of_host.back().push_back(g);
      s.spare_gpus.push_back(g);
    }
  }
  return s;
}

topo::Topology topology_with_spares(const topo::Topology& topology, const ClusterSlots& slots) {
  std::vector<int> templates;
  for (int h = slots.topology_hosts; h < slots.hosts(); ++h) {
    const int rack = slots.domains.rack_of_host[static_cast<std::size_t>(h)];
    templates.push_back(slots.domains.hosts_of_rack[static_cast<std::size_t>(rack)].front());
  }
  return topo::with_spare_hosts(topology, templates);
}

FailureTargets failure_targets(const ClusterSlots& slots, const topo::Topology& topology) {
  FailureTargets t;
  t.gpus = slots.gpus();
  t.hosts = slots.hosts();
  t.racks = slots.domains.racks();
  t.fabric_links = fabric_links(topology);
  return t;
}

double failures_per_hour(const core::FaultConfig& config, const FailureTargets& targets) {
  return config.failures_per_hour(targets.gpus, targets.hosts, targets.gpus,
                                  static_cast<int>(targets.fabric_links.size()), targets.racks);
}

}  // namespace parashift::sim
