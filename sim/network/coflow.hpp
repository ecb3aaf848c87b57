// A coflow: the flows of one collective, in phases of concurrent chains of
// rounds (see collectives.hpp). Rounds are generated on demand, so a
// 16K-rank ring holds one round of flows at a time, not 2(n-1).
#pragma once

#include <functional>
#include <vector>

#include "sim/network/flow_network.hpp"

namespace parashift::sim {

struct Transfer {
  int src = 0;  // GPU index
  int dst = 0;
  double bytes = 0;
};

/// Rounds run one after another; the transfers of a round start together and
/// the next round starts when all of them have arrived.
struct Chain {
  int rounds = 0;
  /// Appends round `round`'s transfers (0 <= round < rounds) to `out`.
  std::function<void(int round, std::vector<Transfer>& out)> make_round;
};

/// Chains run concurrently; the phase ends when every chain has.
using Phase = std::vector<Chain>;

/// Runs the phases in order from now; `on_done(t_ns)` runs when the last
/// has ended (from a kernel event at now when there is nothing to send).
/// Every flow is of class `traffic`.
void run_coflow(FlowNetwork& network, std::vector<Phase> phases, std::uint64_t flow_hash,
                std::function<void(TimeNs done_ns)> on_done,
                core::TrafficClass traffic = core::TrafficClass::Other);

}  // namespace parashift::sim
