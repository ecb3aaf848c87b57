// Hand-built topologies for the flow-network tests (see also ../test_topologies.hpp).
#pragma once

#include <string>

#include "topologies/topology.hpp"

namespace parashift::test {

/// Two leaf switches joined by one cable of `uplink_Bps`; `gpus_per_side`
/// GPUs on each leaf (GPUs 0..k-1 left, k..2k-1 right), every GPU cable
/// `gpu_Bps`; every link `latency_ns`. Each GPU is its own host. A left-right
/// pair is 3 links apart (3 x latency) and all such pairs share the uplink:
/// oversubscribed k x gpu_Bps : uplink_Bps.
inline topo::Topology dumbbell(int gpus_per_side, double gpu_Bps, double uplink_Bps,
                               std::int64_t latency_ns) {
  topo::Topology t;
  const int left = t.add_node({"left", topo::NodeKind::Leaf, -1, -1});
  const int right = t.add_node({"right", topo::NodeKind::Leaf, -1, -1});
  t.add_cable(left, right, uplink_Bps, latency_ns);
  for (int g = 0; g < 2 * gpus_per_side; ++g) {
    const int v = t.add_node({"gpu" + std::to_string(g), topo::NodeKind::Gpu, g, g});
    t.add_cable(v, g < gpus_per_side ? left : right, gpu_Bps, latency_ns);
  }
  t.validate("dumbbell");
  return t;
}

/// Star link ids (test::star: the switch is vertex 0).
inline topo::LinkId uplink(const topo::Topology& t, int gpu) {
  return t.find_link(t.gpu_node(gpu), 0);
}
inline topo::LinkId downlink(const topo::Topology& t, int gpu) {
  return t.find_link(0, t.gpu_node(gpu));
}

}  // namespace parashift::test
