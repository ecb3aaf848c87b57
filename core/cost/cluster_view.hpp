// What the analytical cost model needs to know of a cluster: a two-level
// view (GPUs inside a node on NVLink, nodes joined by one NIC per GPU) and
// the fabric's NCCL parameters. core/scenario/cluster_view.hpp builds it,
// the same way for every command; the simulator builds the same fabric.
#pragma once

#include "core/cost/nccl_model.hpp"
#include "core/units.hpp"

namespace parashift::core {

struct ClusterView {
  int gpus = 0;
  int gpus_per_node = 8;
  double intra_node_Bps = 0;         // per GPU, one direction (NVLink), raw link rate
  double inter_node_Bps = 0;         // per GPU, one direction (its NIC), raw link rate
  TimeNs intra_node_latency_ns = 0;  // wire latency of one hop across the node's switch
  TimeNs inter_node_latency_ns = 0;  // wire latency GPU to GPU across the network
  NcclFabric nccl;                   // protocol efficiencies and algorithms (nccl_model.hpp)

  int nodes() const { return gpus / gpus_per_node; }
};

}  // namespace parashift::core
