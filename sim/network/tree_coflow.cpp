#include "sim/network/tree_coflow.hpp"

#include <algorithm>
#include <memory>
#include <unordered_map>

#include "core/cost/nccl_tree.hpp"
#include "sim/collective.hpp"

namespace parashift::sim {

void start_tree_coflow(FlowNetwork& network, const CoflowModel& model, double bytes,
                       const std::vector<int>& gpus, std::uint64_t flow_hash,
                       std::function<void(TimeNs done_ns)> on_done, core::TrafficClass traffic) {
  Kernel& kernel = network.kernel();
  const topo::Topology& topology = network.topology();
  const core::TreeFlows tree =
      core::nccl_tree_flows(gpus, [&topology](int gpu) { return topology.host_of_gpu(gpu); });
  if (tree.pairs.empty() || bytes <= 0) {
    kernel.schedule_in(0, [&kernel, on_done] { on_done(kernel.now()); });
    return;
  }
  // Each pair carries bytes / (2 channels); the busiest GPU's NIC, out or
  // in, paces the tree alone on the network.
  const double pair_bytes = bytes / (2.0 * tree.channels);
  std::unordered_map<int, double> out_bytes, in_bytes;
  double busiest = 0;
  for (const auto& [from, to] : tree.pairs) {
    busiest = std::max(busiest, out_bytes[pxn_source(topology, from, to)] += pair_bytes);
    busiest = std::max(busiest, in_bytes[to] += pair_bytes);
  }
  const double wire_s = model.links.inter_Bps > 0 ? busiest / model.links.inter_Bps : 0;
  const double scale = wire_s > 0 ? core::ns_to_s(model.nccl.bandwidth_ns) / wire_s : 1.0;
  struct State {
    std::size_t left = 0;
    TimeNs tail_ns = 0;
    std::function<void(TimeNs)> on_done;
  };
  const TimeNs tail_ns = std::max<TimeNs>(0, model.nccl.latency_ns - model.links.inter_wire_ns);
  auto state = std::make_shared<State>(State{tree.pairs.size(), tail_ns, std::move(on_done)});
  for (const auto& [from, to] : tree.pairs) {
    network.start_flow(
        pxn_source(topology, from, to), to, pair_bytes * scale,
        [state, &kernel] {
          if (--state->left > 0) return;
          kernel.schedule_in(state->tail_ns, [state, &kernel] { state->on_done(kernel.now()); });
        },
        flow_hash, traffic);
  }
}

}  // namespace parashift::sim
