// What the analytical cost model needs to know of a cluster: a two-level
// view (GPUs inside a node on NVLink, nodes joined by one NIC per GPU).
// The simulator builds the same view from its topology graph.
#pragma once

#include "core/units.hpp"

namespace parashift::core {

struct ClusterView {
  int gpus = 0;
  int gpus_per_node = 8;
  double intra_node_Bps = 0;         // per GPU, one direction (NVLink)
  double inter_node_Bps = 0;         // per GPU, one direction (its NIC)
  TimeNs intra_node_latency_ns = 0;  // one hop across the node's switch
  TimeNs inter_node_latency_ns = 0;  // GPU to GPU across the network

  int nodes() const { return gpus / gpus_per_node; }
};

}  // namespace parashift::core
