// fat-tree: the plain k-ary fat-tree (Al-Fares et al., 2008).
//
// k pods; a pod has k/2 edge switches (kind leaf) and k/2 aggregation
// switches (kind spine), every edge cabled to every aggregation switch of its
// pod; (k/2)^2 cores in k/2 planes, aggregation switch j of every pod cabled
// to each core of plane j. Each edge switch serves k/2 hosts, so k^3/4 hosts.
// A host is gpus_per_host GPUs sharing one NIC cabled to its edge switch;
// each GPU is cabled to the NIC (PCIe), so GPUs of a host talk through it
// (for NVSwitch nodes use rail-fat-tree).
// Names: g<i> GPUs, n<host> NICs, l<i> edge, p<i> aggregation, c<i> core.
#include <string>

#include "topologies/generators.hpp"
#include "topologies/link_model.hpp"
#include "topologies/names.hpp"

namespace parashift::topo {
namespace {

Topology build_fat_tree(const ParamReader& params) {
  const int k = params.integer("k", 2, 128);
  if (k % 2 != 0) params.fail("k", "an even number of switch ports");
  const int gpus_per_host = params.integer("gpus_per_host", 1, 1024);
  const double link_Bps = gbps_to_Bps(params.number("link_gbps", 0, true));

  const int half = k / 2;
  const int hosts = k * half * half;
  Topology t;
  std::vector<int> nic(static_cast<std::size_t>(hosts));
  for (int h = 0; h < hosts; ++h) {
    nic[h] = t.add_node(NodeInfo{indexed_name('n', h), NodeKind::Nic, -1, h});
    for (int i = 0; i < gpus_per_host; ++i) {
      const int gpu =
          t.add_node(NodeInfo{indexed_name('g', h * gpus_per_host + i), NodeKind::Gpu, -1, h});
      t.add_cable(gpu, nic[h], link_Bps, kNicLatency_ns);
    }
  }
  std::vector<int> edge(static_cast<std::size_t>(k * half));
  std::vector<int> aggregation(static_cast<std::size_t>(k * half));
  for (int i = 0; i < k * half; ++i) {
    edge[i] = t.add_node(NodeInfo{indexed_name('l', i), NodeKind::Leaf});
  }
  for (int i = 0; i < k * half; ++i) {
    aggregation[i] = t.add_node(NodeInfo{indexed_name('p', i), NodeKind::Spine});
  }
  std::vector<int> core(static_cast<std::size_t>(half * half));
  for (int i = 0; i < half * half; ++i) {
    core[i] = t.add_node(NodeInfo{indexed_name('c', i), NodeKind::Core});
  }
  for (int h = 0; h < hosts; ++h) t.add_cable(nic[h], edge[h / half], link_Bps, kCableLatency_ns);
  for (int pod = 0; pod < k; ++pod) {
    for (int e = 0; e < half; ++e) {
      for (int a = 0; a < half; ++a) {
        t.add_cable(edge[pod * half + e], aggregation[pod * half + a], link_Bps, kCableLatency_ns);
      }
    }
    for (int a = 0; a < half; ++a) {
      for (int c = 0; c < half; ++c) {
        t.add_cable(aggregation[pod * half + a], core[a * half + c], link_Bps, kCableLatency_ns);
      }
    }
  }
  return t;
}

}  // namespace

GeneratorInfo fat_tree_generator() {
  return GeneratorInfo{"fat-tree",
                       "plain k-ary fat-tree: k pods, k^3/4 hosts, (k/2)^2 cores",
                       {
                           {"k", "", "switch ports (even, 2..128)"},
                           {"gpus_per_host", "1", "GPUs per host, >= 1"},
                           {"link_gbps", "400", "rate of every fabric and GPU-NIC link, Gb/s"},
                       },
                       build_fat_tree};
}

}  // namespace parashift::topo
