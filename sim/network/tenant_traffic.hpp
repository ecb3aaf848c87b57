// Another tenant's traffic on some links (a `tenant` event of the scenario):
// on each link, one flow of traffic class Tenant that always wants more,
// sent as back-to-back chunks of kChunkNs at the link's rate, so that it
// takes whatever weighted max-min leaves it (all of an idle link; w_t /
// (w_t + sum of the job's weights) of a link the job's flows also want).
// The job's own iteration decides when it is over: stop() lets the chunks in
// flight finish and starts no more, so the kernel runs dry.
#pragma once

#include <memory>
#include <vector>

#include "sim/network/flow_network.hpp"

namespace parashift::sim {

class TenantTraffic {
 public:
  /// A chunk lasts this long alone on its link: the gap between chunks (one
  /// link latency, ~1 us) is then under 1e-4 of the time.
  static constexpr TimeNs kChunkNs = 10'000'000;

  /// Starts the tenant's flows now on `links` (link ids of the network's topology).
  TenantTraffic(FlowNetwork& network, const std::vector<int>& links);
  /// No chunk starts after this.
  void stop();
  /// Bytes the tenant's finished chunks carried.
  double bytes_sent() const { return state_->bytes; }

 private:
  struct State {
    FlowNetwork* network = nullptr;
    bool stopped = false;
    double bytes = 0;
  };
  static void send(const std::shared_ptr<State>& state, int link);
  std::shared_ptr<State> state_;
};

}  // namespace parashift::sim
