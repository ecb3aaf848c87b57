#include "sim/network/ring_coflow.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>

namespace parashift::sim {

void start_ring_coflow(FlowNetwork& network, core::CollectiveKind kind, double bytes,
                       const std::vector<int>& gpus, std::uint64_t flow_hash,
                       std::function<void(TimeNs done_ns)> on_done) {
  const int n = static_cast<int>(gpus.size());
  Kernel& kernel = network.kernel();
  if (n <= 1 || bytes <= 0) {
    kernel.schedule_in(0, [&kernel, on_done] { on_done(kernel.now()); });
    return;
  }
  int steps = 0;
  double per_flow = 0;
  switch (kind) {
    case core::CollectiveKind::AllReduce:
      steps = 2 * (n - 1);
      per_flow = bytes * steps / n;
      break;
    case core::CollectiveKind::ReduceScatter:
    case core::CollectiveKind::AllGather:
      steps = n - 1;
      per_flow = bytes * steps / n;
      break;
    case core::CollectiveKind::SendRecv:
      steps = 1;
      per_flow = bytes;
      break;
    case core::CollectiveKind::AllToAll:
      throw std::invalid_argument("start_ring_coflow: all-to-all is not a ring coflow");
  }
  // The flows carry one path latency each; the other steps' latencies follow.
  const topo::Topology& topology = network.topology();
  TimeNs hop_latency_ns = 0;
  for (int i = 0; i < n; ++i) {
    TimeNs latency = 0;
    for (const topo::LinkId id : topology.route(gpus[i], gpus[(i + 1) % n], flow_hash)) {
      latency += topology.link(id).latency_ns;
    }
    hop_latency_ns = std::max(hop_latency_ns, latency);
  }
  struct State {
    int left = 0;
    TimeNs tail_ns = 0;
    std::function<void(TimeNs)> on_done;
  };
  auto state = std::make_shared<State>(State{n, (steps - 1) * hop_latency_ns, std::move(on_done)});
  for (int i = 0; i < n; ++i) {
    network.start_flow(
        gpus[i], gpus[(i + 1) % n], per_flow,
        [state, &kernel] {
          if (--state->left > 0) return;
          kernel.schedule_in(state->tail_ns, [state, &kernel] { state->on_done(kernel.now()); });
        },
        flow_hash);
  }
}

}  // namespace parashift::sim
