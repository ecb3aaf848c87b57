#include "sim/network/tenant_traffic.hpp"

namespace parashift::sim {

TenantTraffic::TenantTraffic(FlowNetwork& network, const std::vector<int>& links)
    : state_(std::make_shared<State>(State{&network, false, 0})) {
  for (const int link : links) send(state_, link);
}

void TenantTraffic::stop() {
  state_->stopped = true;
}

void TenantTraffic::send(const std::shared_ptr<State>& state, int link) {
  // A chunk sized at the link's nominal rate (a degraded link's chunk just
  // lasts longer; a stalled one, never finishing, is stopped with the run).
  const double bytes =
      state->network->topology().link(link).bandwidth_Bps * core::ns_to_s(kChunkNs);
  if (!(bytes > 0)) return;
  state->network->start_link_flow(
      link, bytes,
      [state, link, bytes] {
        state->bytes += bytes;
        if (!state->stopped) send(state, link);
      },
      core::TrafficClass::Tenant);
}

}  // namespace parashift::sim
