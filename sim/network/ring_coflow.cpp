#include "sim/network/ring_coflow.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>

#include "sim/collective.hpp"

namespace parashift::sim {

void start_ring_coflow(FlowNetwork& network, const CoflowModel& model, core::CollectiveKind kind,
                       double bytes, const std::vector<int>& gpus, std::uint64_t flow_hash,
                       std::function<void(TimeNs done_ns)> on_done, core::TrafficClass traffic) {
  const int n = static_cast<int>(gpus.size());
  Kernel& kernel = network.kernel();
  if (n <= 1 || bytes <= 0) {
    kernel.schedule_in(0, [&kernel, on_done] { on_done(kernel.now()); });
    return;
  }
  if (kind == core::CollectiveKind::AllToAll) {
    throw std::invalid_argument("start_ring_coflow: all-to-all is not a ring coflow");
  }
  const double wire_flow =
      kind == core::CollectiveKind::SendRecv ? bytes : bytes * core::nccl_bus_factor(kind, n);
  const core::GroupLinks& links = model.links;
  const double slowest = links.intra_Bps > 0 && links.inter_Bps > 0
                             ? std::min(links.intra_Bps, links.inter_Bps)
                             : std::max(links.intra_Bps, links.inter_Bps);
  const TimeNs longest_ns = std::max(links.intra_wire_ns, links.inter_wire_ns);
  const double wire_s = wire_flow / slowest;
  const double scale = wire_s > 0 ? core::ns_to_s(model.nccl.bandwidth_ns) / wire_s : 1.0;
  const double per_flow = wire_flow * scale;
  struct State {
    int left = 0;
    TimeNs tail_ns = 0;
    std::function<void(TimeNs)> on_done;
  };
  const TimeNs tail_ns = std::max<TimeNs>(0, model.nccl.latency_ns - longest_ns);
  auto state = std::make_shared<State>(State{n, tail_ns, std::move(on_done)});
  const topo::Topology& topology = network.topology();
  for (int i = 0; i < n; ++i) {
    const int next = gpus[(i + 1) % n];
    network.start_flow(
        pxn_source(topology, gpus[i], next), next, per_flow,
        [state, &kernel] {
          if (--state->left > 0) return;
          kernel.schedule_in(state->tail_ns, [state, &kernel] { state->on_done(kernel.now()); });
        },
        flow_hash, traffic);
  }
}

}  // namespace parashift::sim
