// The simulated cluster's hidden truth: how its real kernels and links
// differ from the device preset and topology the policy is given. The
// simulator runs the truth; the policy never reads it and starts from the
// preset, so a self-calibrating cost model can be tested against a cluster
// that is not what the datasheet says (scenario `cluster.truth:`).
#pragma once

#include <string>
#include <vector>

#include "core/device_spec.hpp"
#include "topologies/topology.hpp"

namespace parashift::core {

class YamlFields;

struct ClusterTruth {
  /// Each a factor on the preset: the truth's efficiency (or link rate) is
  /// the preset's times the factor. 1 = the preset is right.
  double gemm_efficiency = 1.0;       // gemm_max and fp8_gemm_max
  double attention_efficiency = 1.0;  // fused attention
  double memory_efficiency = 1.0;     // element-wise (HBM-bound) kernels
  double intra_node_bandwidth = 1.0;  // every link inside a node (NVLink)
  double inter_node_bandwidth = 1.0;  // every link that leaves a node (NIC, fabric)

  bool is_preset() const;
  /// The device the cluster really is: the preset's efficiencies times the factors.
  DeviceSpec device(const DeviceSpec& preset) const;
  /// The topology with every link's rate times its factor (intra-node: both
  /// ends in one host; every other link is inter-node).
  topo::Topology topology(const topo::Topology& preset) const;
  /// "gemm_efficiency 0.8x, inter_node_bandwidth 0.5x" (the factors not 1).
  std::string describe() const;
};

/// Whether link `id` joins two devices of one host (NVLink, the node's
/// switch); every other link is inter-node (NIC, fabric).
bool intra_node_link(const topo::Topology& topology, topo::LinkId id);

/// Reads `cluster.truth` (a map of the factors above, each in (0, 10]).
ClusterTruth read_cluster_truth(YamlFields& truth);

}  // namespace parashift::core
