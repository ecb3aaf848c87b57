// DGX A100 / H100 nodes and the single-node generators.
#include "topologies/dgx.hpp"

#include <string>

#include "topologies/generators.hpp"
#include "topologies/link_model.hpp"
#include "topologies/names.hpp"

namespace parashift::topo {

std::optional<DgxSpec> find_dgx_spec(std::string_view name) {
  if (name == "dgx-a100") return DgxSpec{"dgx-a100", 8, gigabytes_to_Bps(300), 200};
  if (name == "dgx-h100") return DgxSpec{"dgx-h100", 8, gigabytes_to_Bps(450), 400};
  return std::nullopt;
}

DgxNode add_dgx_node(Topology& topology, const DgxSpec& spec, int host, double nic_Bps) {
  DgxNode node;
  node.nvswitch =
      topology.add_node(NodeInfo{indexed_name('s', host), NodeKind::NvSwitch, -1, host});
  for (int k = 0; k < spec.gpus; ++k) {
    const int index = host * spec.gpus + k;
    const int gpu = topology.add_node(NodeInfo{indexed_name('g', index), NodeKind::Gpu, -1, host});
    const int nic = topology.add_node(NodeInfo{indexed_name('n', index), NodeKind::Nic, -1, host});
    topology.add_cable(gpu, node.nvswitch, spec.nvlink_Bps, kNvlinkLatency_ns);
    topology.add_cable(gpu, nic, nic_Bps, kNicLatency_ns);
    node.gpus.push_back(gpu);
    node.nics.push_back(nic);
  }
  return node;
}

namespace {

GeneratorInfo dgx_generator(const std::string& name, const std::string& summary,
                            const std::string& nic_default) {
  Topology (*build)(const ParamReader&) = [](const ParamReader& params) {
    const DgxSpec spec = *find_dgx_spec(params.generator());
    const double nic_gbps = params.number("nic_gbps", 0, true);
    Topology topology;
    add_dgx_node(topology, spec, 0, gbps_to_Bps(nic_gbps));
    return topology;
  };
  return GeneratorInfo{
      name, summary, {{"nic_gbps", nic_default, "NIC line rate per GPU, Gb/s"}}, build};
}

}  // namespace

GeneratorInfo dgx_a100_generator() {
  return dgx_generator("dgx-a100",
                       "one DGX A100: 8 GPUs on an NVSwitch (300 GB/s per GPU per direction), "
                       "one 200 Gb/s HDR NIC per GPU",
                       "200");
}

GeneratorInfo dgx_h100_generator() {
  return dgx_generator("dgx-h100",
                       "one DGX H100: 8 GPUs on an NVSwitch (450 GB/s per GPU per direction), "
                       "one 400 Gb/s NDR NIC per GPU",
                       "400");
}

}  // namespace parashift::topo
