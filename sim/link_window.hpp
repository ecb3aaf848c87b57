// What one job of a shared cluster measures on the links over one of its
// iterations: the switch ports' counters read when the iteration starts and
// again when it ends, for the links the job's own flows crossed. Every
// byte on such a link that is not the job's (another job's, a tenant's) is
// foreign to it: the congestion a job on a real shared cluster sees, and
// all it sees of the others.
#pragma once

#include <vector>

#include "sim/iteration.hpp"
#include "sim/network/flow_network.hpp"

namespace parashift::sim {

class LinkWindow {
 public:
  /// Reads the counters now; `owner` is the job's (FlowNetwork::set_gpu_owners).
  void open(const FlowNetwork& network, int owner);
  /// What each link the owner's flows crossed since open() carried, was
  /// busy and carried for others; by link id.
  std::vector<LinkUse> close(const FlowNetwork& network) const;

 private:
  int owner_ = -1;
  std::vector<double> bytes_;
  std::vector<double> own_bytes_;
  std::vector<TimeNs> busy_ns_;
};

}  // namespace parashift::sim
