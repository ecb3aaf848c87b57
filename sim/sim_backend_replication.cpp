// SimBackend's snapshot replication: after the device -> host copy, each
// rank's state goes to `replicas - 1` peer hosts in other failure domains
// (core::peer_hosts, as the fault campaigns place them), from its GPU to the
// GPU in its place there, as class-Snapshot flows under the next iterations
// (max-min network only: sim/network/snapshot_traffic.hpp). The version
// commits when every pair is done. Under the path network, which shares no
// link, only the copy is timed, as before.
#include "core/snapshot/failure_domains.hpp"
#include "sim/sim_backend.hpp"

namespace parashift::sim {

void SimBackend::start_replication(long long version) {
  if (!scenario_.run.contention || !scenario_.faults) return;
  const core::SnapshotConfig& config = scenario_.faults->snapshot;
  if (config.replicas < 2) return;
  // A newer version supersedes one still replicating (it never commits).
  replication_pairs_.clear();
  const int ranks = plan_now().gpus();
  for (int r = 0; r < ranks; ++r) {
    const auto gpu = static_cast<std::size_t>(gpu_of_rank(r));
    const int host = slots_.host_of_gpu[gpu];
    const auto local = static_cast<std::size_t>(slots_.local_of_gpu[gpu]);
    for (int peer : core::peer_hosts(slots_.domains, host, config.replicas - 1, config.domain)) {
      const auto& there = slots_.gpus_of_host[static_cast<std::size_t>(peer)];
      if (local < there.size()) replication_pairs_.push_back({static_cast<int>(gpu), there[local]});
    }
  }
  if (replication_pairs_.empty()) return;
  replicating_version_ = version;
  replication_taken_ns_ = now_ns_;
  replication_left_bytes_ = rank_state_bytes();
}

void SimBackend::count_replication(TimeNs iteration_start_ns) {
  if (replication_left_bytes_ <= 0) return;
  if (last_->snapshot_done_ns >= 0) {
    commits_.push_back({replicating_version_, replication_taken_ns_,
                        iteration_start_ns + last_->snapshot_done_ns});
    replication_left_bytes_ = 0;
    replicating_version_ = -1;
    return;
  }
  // Chunks in flight when the iteration ends still finish, so every pair
  // gets at least one chunk through an iteration.
  replication_left_bytes_ -= last_->snapshot_bytes_per_pair;
}

}  // namespace parashift::sim
