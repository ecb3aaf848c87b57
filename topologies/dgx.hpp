// DGX server nodes: 8 GPUs on one NVSwitch vertex, one NIC per GPU.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "topologies/topology.hpp"

namespace parashift::topo {

struct DgxSpec {
  std::string_view name;  // "dgx-a100"
  int gpus = 8;
  double nvlink_Bps = 0;  // per GPU, one direction
  double nic_gbps = 0;    // per NIC (one per GPU)
};

/// dgx-a100: NVLink 3 at 300 GB/s per direction, ConnectX-6 HDR 200 Gb/s.
/// dgx-h100: NVLink 4 at 450 GB/s per direction, ConnectX-7 NDR 400 Gb/s.
std::optional<DgxSpec> find_dgx_spec(std::string_view name);

/// The vertices of one node; gpus[k] and nics[k] share rail k.
struct DgxNode {
  int nvswitch = -1;
  std::vector<int> gpus;
  std::vector<int> nics;
};

/// Adds node `host`: GPUs g<host*8+k>, NVSwitch s<host>, NICs n<host*8+k>;
/// GPU<->NVSwitch cables at NVLink rate, GPU<->NIC cables at nic_Bps.
DgxNode add_dgx_node(Topology& topology, const DgxSpec& spec, int host, double nic_Bps);

}  // namespace parashift::topo
