#include "core/snapshot/interval.hpp"

#include <algorithm>
#include "core/assert.hpp"
#include <cmath>

namespace parashift::core {

double young_interval_s(double cost_s, double mtbf_s) {
  PARASHIFT_ASSERT(cost_s >= 0 && mtbf_s > 0);
  return std::sqrt(2.0 * cost_s * mtbf_s);
}

double daly_interval_s(double cost_s, double mtbf_s) {
  PARASHIFT_ASSERT(cost_s >= 0 && mtbf_s > 0);
  if (cost_s >= 2.0 * mtbf_s) return mtbf_s;
  const double x = cost_s / (2.0 * mtbf_s);
  return std::sqrt(2.0 * cost_s * mtbf_s) * (1.0 + std::sqrt(x) / 3.0 + x / 9.0) - cost_s;
}

}  // namespace parashift::core

namespace parashift::core {

SnapshotCadence snapshot_cadence(TimeNs interval_ns, TimeNs iteration_ns, TimeNs replication_ns) {
  PARASHIFT_ASSERT(iteration_ns > 0 && interval_ns >= 0 && replication_ns >= 0);
  const long long smallest =
      std::max<long long>(1, (replication_ns + iteration_ns - 1) / iteration_ns);
  const long long fits =
      interval_ns > replication_ns ? (interval_ns - replication_ns) / iteration_ns : 0;
  SnapshotCadence c;
  c.every = std::max(smallest, fits);
  c.commit_gap_ns = c.every * iteration_ns + replication_ns;
  c.feasible = c.commit_gap_ns <= interval_ns;
  return c;
}

}  // namespace parashift::core
