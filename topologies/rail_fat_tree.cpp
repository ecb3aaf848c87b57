// rail-fat-tree: DGX nodes on a rail-optimised 2- or 3-tier fat-tree.
//
// Every switch has R = leaf_radix ports, half down and half up. Nodes come
// in groups of R/2 (a scalable unit). A group has one leaf per rail: NIC k
// of each node in the group plugs into the group's rail-k leaf, so GPUs of
// the same rail across a group are one leaf apart.
//
// tiers=2: R/2 spines; every leaf has one cable to every spine. Holds at
//          most R leaves, i.e. R/2 * R/rails nodes (256 DGX for R=64).
// tiers=3: a pod is (R/2)/rails groups, i.e. R/2 leaves, with its own R/2
//          spines, every pod leaf cabled to every pod spine. The core layer
//          is that of a 3-tier k-ary fat-tree: (R/2)^2 cores in R/2 planes;
//          spine j of every pod is cabled to each core of plane j, so a core
//          uses one port per pod. Holds at most R pods (8,192 DGX for R=64).
//
// Rates: NIC and fabric cables at nic_gbps; leaf uplinks at
// nic_gbps / oversubscription (spine-core cables are not oversubscribed).
// Names: g<i> GPUs, n<i> NICs, s<node> NVSwitches, l<i> leaves (group-major,
// rail-minor), p<i> spines (pod-major), c<i> cores (plane-major).
#include <string>

#include "topologies/dgx.hpp"
#include "topologies/generators.hpp"
#include "topologies/link_model.hpp"
#include "topologies/names.hpp"

namespace parashift::topo {
namespace {

int ceil_div(int a, int b) {
  return (a + b - 1) / b;
}

Topology build_rail_fat_tree(const ParamReader& params) {
  const int nodes = params.integer("nodes", 1, 1 << 20);
  const DgxSpec spec = *find_dgx_spec(params.choice("node", {"dgx-a100", "dgx-h100"}));
  const int tiers = params.integer("tiers", 2, 3);
  const double oversubscription = params.number("oversubscription", 1);
  const double nic_gbps =
      params.given("nic_gbps") ? params.number("nic_gbps", 0, true) : spec.nic_gbps;
  const int radix = params.integer("leaf_radix", 2, 1 << 16);
  if (radix % 2 != 0) params.fail("leaf_radix", "an even number of ports");

  const int half = radix / 2;
  const int rails = spec.gpus;
  const int groups = ceil_div(nodes, half);
  const int leaves = groups * rails;
  int groups_per_pod = 0;
  int pods = 1;
  if (tiers == 2) {
    if (leaves > radix) {
      params.fail("nodes", "at most " + std::to_string(radix / rails * half) +
                               " nodes for a 2-tier tree of " + std::to_string(radix) +
                               "-port switches (use tiers=3)");
    }
  } else {
    groups_per_pod = half / rails;
    if (groups_per_pod == 0) {
      params.fail("leaf_radix", "at least " + std::to_string(2 * rails) +
                                    " ports for a 3-tier tree of " + std::to_string(rails) +
                                    "-rail nodes");
    }
    pods = ceil_div(groups, groups_per_pod);
    if (pods > radix) {
      params.fail("nodes", "at most " + std::to_string(radix * groups_per_pod * half) +
                               " nodes for a 3-tier tree of " + std::to_string(radix) +
                               "-port switches");
    }
  }

  const double link_Bps = gbps_to_Bps(nic_gbps);
  const double uplink_Bps = link_Bps / oversubscription;
  Topology t;
  std::vector<DgxNode> dgx;
  dgx.reserve(static_cast<std::size_t>(nodes));
  for (int h = 0; h < nodes; ++h) dgx.push_back(add_dgx_node(t, spec, h, link_Bps));

  std::vector<int> leaf(static_cast<std::size_t>(leaves));
  for (int i = 0; i < leaves; ++i) {
    leaf[i] = t.add_node(NodeInfo{indexed_name('l', i), NodeKind::Leaf});
  }
  for (int h = 0; h < nodes; ++h) {
    const int group = h / half;
    for (int k = 0; k < rails; ++k) {
      t.add_cable(dgx[h].nics[k], leaf[group * rails + k], link_Bps, kCableLatency_ns);
    }
  }

  if (tiers == 2) {
    std::vector<int> spine(static_cast<std::size_t>(half));
    for (int j = 0; j < half; ++j) {
      spine[j] = t.add_node(NodeInfo{indexed_name('p', j), NodeKind::Spine});
    }
    for (const int l : leaf) {
      for (const int s : spine) t.add_cable(l, s, uplink_Bps, kCableLatency_ns);
    }
    return t;
  }

  const int leaves_per_pod = groups_per_pod * rails;
  std::vector<int> spine(static_cast<std::size_t>(pods * half));
  for (int i = 0; i < pods * half; ++i) {
    spine[i] = t.add_node(NodeInfo{indexed_name('p', i), NodeKind::Spine});
  }
  for (int i = 0; i < leaves; ++i) {
    const int pod = i / leaves_per_pod;
    for (int j = 0; j < half; ++j) {
      t.add_cable(leaf[i], spine[pod * half + j], uplink_Bps, kCableLatency_ns);
    }
  }
  std::vector<int> core(static_cast<std::size_t>(half * half));
  for (int i = 0; i < half * half; ++i) {
    core[i] = t.add_node(NodeInfo{indexed_name('c', i), NodeKind::Core});
  }
  for (int pod = 0; pod < pods; ++pod) {
    for (int j = 0; j < half; ++j) {
      for (int c = 0; c < half; ++c) {
        t.add_cable(spine[pod * half + j], core[j * half + c], link_Bps, kCableLatency_ns);
      }
    }
  }
  return t;
}

}  // namespace

GeneratorInfo rail_fat_tree_generator() {
  return GeneratorInfo{
      "rail-fat-tree",
      "DGX nodes on a rail-optimised fat-tree: NIC k of every node on its group's rail-k leaf",
      {
          {"nodes", "", "number of DGX nodes, >= 1"},
          {"node", "dgx-h100", "node type: dgx-a100 or dgx-h100"},
          {"tiers", "2", "switch tiers: 2 (leaf, spine) or 3 (leaf, spine, core)"},
          {"oversubscription", "1",
           "leaf downlink:uplink bandwidth ratio, >= 1; uplink = downlink / oversubscription"},
          {"nic_gbps", "from node",
           "NIC and fabric link rate in Gb/s (default 200 A100, 400 H100)"},
          {"leaf_radix", "64", "ports per switch (even); half face down, half up"},
      },
      build_rail_fat_tree};
}

}  // namespace parashift::topo
