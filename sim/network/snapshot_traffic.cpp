#include "sim/network/snapshot_traffic.hpp"

#include <algorithm>
#include <map>

namespace parashift::sim {

SnapshotTraffic::SnapshotTraffic(FlowNetwork& network,
                                 const std::vector<std::pair<int, int>>& pairs, double bytes_left)
    : state_(std::make_shared<State>()) {
  state_->network = &network;
  state_->sent.assign(pairs.size(), 0.0);
  state_->bytes_left = bytes_left;
  state_->pending = pairs.size();
  for (std::size_t p = 0; p < pairs.size(); ++p) send(state_, p, pairs[p].first, pairs[p].second);
}

void SnapshotTraffic::stop() {
  state_->stopped = true;
}

double SnapshotTraffic::bytes_per_pair() const {
  return state_->sent.empty() ? 0.0 : *std::min_element(state_->sent.begin(), state_->sent.end());
}

void SnapshotTraffic::send(const std::shared_ptr<State>& state, std::size_t pair, int src,
                           int dst) {
  const double bytes = std::min(kChunkBytes, state->bytes_left - state->sent[pair]);
  if (!(bytes > 0)) return;
  state->network->start_flow(
      src, dst, bytes,
      [state, pair, src, dst, bytes] {
        state->sent[pair] += bytes;
        if (state->bytes_left - state->sent[pair] < 1.0) {  // the last chunk is the rest
          state->done_ns = state->network->kernel().now();
          --state->pending;
        } else if (!state->stopped) {
          send(state, pair, src, dst);
        }
      },
      static_cast<std::uint64_t>(pair), core::TrafficClass::Snapshot);
}

TimeNs replication_alone_ns(const topo::Topology& topology,
                            const std::vector<std::pair<int, double>>& link_Bps,
                            const std::vector<std::pair<int, int>>& pairs, double bytes,
                            double training_share) {
  Kernel kernel;
  FlowNetwork network(kernel, topology);
  const double left = std::max(0.05, 1.0 - training_share);
  const std::map<int, double> overridden(link_Bps.begin(), link_Bps.end());
  for (int e = 0; e < topology.link_count(); ++e) {
    const auto it = overridden.find(e);
    network.set_link_bandwidth(
        e, (it != overridden.end() ? it->second : topology.link(e).bandwidth_Bps) * left);
  }
  TimeNs last = 0;
  for (std::size_t p = 0; p < pairs.size(); ++p) {
    network.start_flow(
        pairs[p].first, pairs[p].second, bytes, [&] { last = std::max(last, kernel.now()); },
        static_cast<std::uint64_t>(pairs[p].first),
        core::TrafficClass::Snapshot);  // ECMP by source
  }
  kernel.run();
  return last;
}

}  // namespace parashift::sim
