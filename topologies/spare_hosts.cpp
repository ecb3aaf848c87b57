#include "topologies/spare_hosts.hpp"

#include <map>
#include <string>

namespace parashift::topo {

Topology with_spare_hosts(const Topology& topology, const std::vector<int>& template_hosts) {
  Topology out = topology;
  const int nodes = topology.node_count();
  const int links = topology.link_count();
  int next_host = topology.host_count();
  for (std::size_t i = 0; i < template_hosts.size(); ++i) {
    const int from = template_hosts[i];
    if (from < 0 || from >= topology.host_count())
      throw TopologyError("spare host " + std::to_string(i) + ": template host " +
                          std::to_string(from) + "; expected 0.." +
                          std::to_string(topology.host_count() - 1));
    const int host = next_host++;
    const std::string prefix = "spare" + std::to_string(i) + "/";
    // Copy the host's vertices (GPUs in index order, so the new GPU indices
    // keep the template's local order), then every link touching them.
    std::map<int, int> copy_of;
    for (int g = 0; g < topology.gpu_count(); ++g) {
      if (topology.host_of_gpu(g) != from) continue;
      NodeInfo info = topology.node(topology.gpu_node(g));
      info.name = prefix + info.name;
      info.gpu_index = -1;
      info.host = host;
      copy_of[topology.gpu_node(g)] = out.add_node(info);
    }
    for (int v = 0; v < nodes; ++v) {
      NodeInfo info = topology.node(v);
      if (info.kind == NodeKind::Gpu || info.host != from) continue;
      info.name = prefix + info.name;
      info.host = host;
      copy_of[v] = out.add_node(info);
    }
    auto mapped = [&](int v) {
      const auto it = copy_of.find(v);
      return it == copy_of.end() ? v : it->second;
    };
    for (LinkId e = 0; e < links; ++e) {
      const LinkInfo& l = topology.link(e);
      if (copy_of.count(l.src) == 0 && copy_of.count(l.dst) == 0) continue;
      out.add_link(mapped(l.src), mapped(l.dst), l.bandwidth_Bps, l.latency_ns);
    }
  }
  out.validate("topology with spare hosts");
  return out;
}

}  // namespace parashift::topo
