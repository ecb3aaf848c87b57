// What shares the max-min network with an iteration besides the job's own
// flows: other tenants' traffic and the job's snapshot replication. Both
// start with the iteration and stop starting chunks once every worker is in
// its optimizer step.
#pragma once

#include <memory>

#include "sim/iteration.hpp"
#include "sim/network/snapshot_traffic.hpp"
#include "sim/network/tenant_traffic.hpp"

namespace parashift::sim {

class BackgroundTraffic {
 public:
  BackgroundTraffic(FlowNetwork& network, const IterationInput& in) {
    if (!in.tenant_links.empty())
      tenants_ = std::make_unique<TenantTraffic>(network, in.tenant_links);
    if (!in.snapshot_pairs.empty() && in.snapshot_bytes_left > 0)
      snapshots_ =
          std::make_unique<SnapshotTraffic>(network, in.snapshot_pairs, in.snapshot_bytes_left);
  }
  void stop() {
    if (tenants_) tenants_->stop();
    if (snapshots_) snapshots_->stop();
  }
  /// The replication's progress into the iteration's result.
  void collect(IterationResult& r) const {
    if (!snapshots_) return;
    r.snapshot_bytes_per_pair = snapshots_->bytes_per_pair();
    r.snapshot_done_ns = snapshots_->done_ns();
  }

 private:
  std::unique_ptr<TenantTraffic> tenants_;
  std::unique_ptr<SnapshotTraffic> snapshots_;
};

}  // namespace parashift::sim
