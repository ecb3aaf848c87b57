#include "core/snapshot/failure_domains.hpp"

#include <map>

namespace parashift::core {

int FailureDomains::add_host(int rack) {
  const int id = hosts();
  rack_of_host.push_back(rack);
  position_in_rack.push_back(
      static_cast<int>(hosts_of_rack[static_cast<std::size_t>(rack)].size()));
  hosts_of_rack[static_cast<std::size_t>(rack)].push_back(id);
  return id;
}

namespace {

// The leaf switch reached from GPU `gpu` through its NIC; -1 when none.
int leaf_of_gpu(const topo::Topology& t, int gpu) {
  const auto& g = t.graph();
  const auto v = static_cast<std::size_t>(t.gpu_node(gpu));
  for (auto [e, end] = boost::out_edges(v, g); e != end; ++e) {
    const auto nic = boost::target(*e, g);
    if (g[nic].kind == topo::NodeKind::Leaf) return static_cast<int>(nic);
    if (g[nic].kind != topo::NodeKind::Nic) continue;
    for (auto [f, fend] = boost::out_edges(nic, g); f != fend; ++f) {
      const auto leaf = boost::target(*f, g);
      if (g[leaf].kind == topo::NodeKind::Leaf) return static_cast<int>(leaf);
    }
  }
  return -1;
}

}  // namespace

FailureDomains failure_domains(const topo::Topology& topology, std::optional<int> hosts_per_rack) {
  FailureDomains d;
  const int hosts = topology.host_count();
  std::vector<int> first_gpu(static_cast<std::size_t>(hosts), -1);
  for (int g = topology.gpu_count() - 1; g >= 0; --g)
    first_gpu[static_cast<std::size_t>(topology.host_of_gpu(g))] = g;
  std::map<int, int> rack_of_key;
  for (int h = 0; h < hosts; ++h) {
    int key = hosts_per_rack ? h / *hosts_per_rack
                             : leaf_of_gpu(topology, first_gpu[static_cast<std::size_t>(h)]);
    if (key < 0) key = -1;  // no leaf (single switch, NVLink only): one rack
    auto [it, added] = rack_of_key.emplace(key, static_cast<int>(rack_of_key.size()));
    if (added) d.hosts_of_rack.emplace_back();
    d.add_host(it->second);
  }
  return d;
}

std::vector<int> peer_hosts(const FailureDomains& d, int host, int copies, FailureDomain domain,
                            const std::set<int>* skip) {
  if (skip != nullptr && !skip->empty()) {
    std::vector<int> out;
    for (int peer : peer_hosts(d, host, d.hosts(), domain)) {
      if (static_cast<int>(out.size()) == copies) break;
      if (skip->count(peer) == 0) out.push_back(peer);
    }
    return out;
  }
  std::vector<int> out;
  const auto h = static_cast<std::size_t>(host);
  const int rack = d.rack_of_host[h];
  const int pos = d.position_in_rack[h];
  const int racks = d.racks();
  if (domain == FailureDomain::Node) {
    for (int r = 0; r < racks && static_cast<int>(out.size()) < copies; ++r) {
      const auto& members = d.hosts_of_rack[static_cast<std::size_t>((rack + r) % racks)];
      const int n = static_cast<int>(members.size());
      for (int i = 1; i <= n && static_cast<int>(out.size()) < copies; ++i) {
        const int peer = members[static_cast<std::size_t>((pos + i) % n)];
        if (peer != host) out.push_back(peer);
      }
    }
    return out;
  }
  for (int r = 1; r < racks && static_cast<int>(out.size()) < copies; ++r) {
    const auto& members = d.hosts_of_rack[static_cast<std::size_t>((rack + r) % racks)];
    out.push_back(members[static_cast<std::size_t>(pos) % members.size()]);
  }
  // A single rack: fall back to other nodes of it.
  if (static_cast<int>(out.size()) < copies) {
    for (int peer :
         peer_hosts(d, host, copies - static_cast<int>(out.size()), FailureDomain::Node)) {
      out.push_back(peer);
    }
  }
  return out;
}

}  // namespace parashift::core
