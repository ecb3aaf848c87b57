#include "sim/collective.hpp"

#include <algorithm>

namespace parashift::sim {

double bus_factor(core::CollectiveKind kind, int ranks) {
  return core::nccl_bus_factor(kind, ranks);
}

core::GroupLinks group_links_of(const PathModel& paths, const std::vector<int>& gpus) {
  return group_links_from(paths.topology(), gpus,
                          [&paths](int a, int b) { return paths.path(a, b); });
}

core::NcclTime nccl_collective_on(const PathModel& paths, const core::NcclFabric& fabric,
                                  core::CollectiveKind kind, double bytes,
                                  const std::vector<int>& gpus, core::NcclAlgo algo) {
  if (gpus.size() <= 1 || bytes <= 0) return {};
  return core::nccl_collective(fabric, kind, bytes, group_links_of(paths, gpus), algo);
}

TimeNs ring_collective_ns(const PathModel& paths, const core::NcclFabric& fabric,
                          core::CollectiveKind kind, double bytes, const std::vector<int>& gpus) {
  return nccl_collective_on(paths, fabric, kind, bytes, gpus).time_ns;
}

TimeNs ring_wire_ns(const PathModel& paths, core::CollectiveKind kind, double bytes,
                    const std::vector<int>& gpus) {
  const int n = static_cast<int>(gpus.size());
  if (n <= 1 || bytes <= 0) return 0;
  // A send/recv step moves the whole buffer to the ring neighbour (the
  // context-parallel KV exchange); the ring collectives move bytes/n per step.
  const double chunk = kind == core::CollectiveKind::SendRecv ? bytes : bytes / n;
  if (kind == core::CollectiveKind::AllToAll) {
    // Step k: every rank sends its chunk to the rank k places ahead.
    TimeNs total = 0;
    for (int k = 1; k < n; ++k) {
      TimeNs slowest = 0;
      for (int i = 0; i < n; ++i) {
        slowest = std::max(slowest, paths.transfer_ns(gpus[i], gpus[(i + k) % n], chunk));
      }
      total += slowest;
    }
    return total;
  }
  TimeNs step = 0;
  for (int i = 0; i < n; ++i) {
    step = std::max(step, paths.transfer_ns(gpus[i], gpus[(i + 1) % n], chunk));
  }
  const int steps = kind == core::CollectiveKind::AllReduce  ? 2 * (n - 1)
                    : kind == core::CollectiveKind::SendRecv ? 1
                                                             : n - 1;
  return step * steps;
}

}  // namespace parashift::sim
