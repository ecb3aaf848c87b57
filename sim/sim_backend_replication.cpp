// SimBackend's snapshot replication: after the device -> host copy, each
// rank's state goes to `replicas - 1` peer hosts in other failure domains
// (core::peer_hosts, as the fault campaigns place them), from its GPU to the
// GPU in its place there. Under the max-min network it runs as class-Snapshot
// flows under the next iterations (sim/network/snapshot_traffic.hpp). The
// path network shares no link within an iteration, so the replication is
// priced on its own (replication_alone_ns: the pairs max-min among
// themselves on what the last iteration's data-parallel traffic leaves of
// each link, as the fault campaigns price it) and runs from the next
// iteration's start. The version commits when every pair is done.
#include <algorithm>
#include <set>

#include "core/snapshot/failure_domains.hpp"
#include "sim/network/snapshot_traffic.hpp"
#include "sim/sim_backend.hpp"

namespace parashift::sim {

void SimBackend::start_replication(long long version) {
  if (!scenario_.faults) return;
  const core::SnapshotConfig& config = scenario_.faults->snapshot;
  // A newer version supersedes one still replicating (it never commits).
  replication_pairs_.clear();
  replication_alone_ns_ = replication_due_ns_ = -1;
  replication_left_bytes_ = 0;
  replicating_version_ = -1;
  // With no copy to send (one replica, or no peer host in service) the
  // version is as safe as it will get once in host memory.
  if (config.replicas < 2) {
    commit_version(version, now_ns_);
    return;
  }
  // Hosts out of service (every GPU failed or drained) receive no replica:
  // the next candidate does, as in the fault campaigns.
  std::set<int> down;
  for (int h = 0; h < slots_.hosts(); ++h) {
    const auto& gpus = slots_.gpus_of_host[static_cast<std::size_t>(h)];
    if (std::all_of(gpus.begin(), gpus.end(),
                    [&](int g) { return dead_[static_cast<std::size_t>(g)]; }))
      down.insert(h);
  }
  const int ranks = plan_now().gpus();
  for (int r = 0; r < ranks; ++r) {
    const auto gpu = static_cast<std::size_t>(gpu_of_rank(r));
    const int host = slots_.host_of_gpu[gpu];
    const auto local = static_cast<std::size_t>(slots_.local_of_gpu[gpu]);
    for (int peer :
         core::peer_hosts(slots_.domains, host, config.replicas - 1, config.domain, &down)) {
      const auto& there = slots_.gpus_of_host[static_cast<std::size_t>(peer)];
      if (local >= there.size()) continue;
      replication_pairs_.push_back({static_cast<int>(gpu), there[local]});
      held_.back().peers[static_cast<std::size_t>(r)].push_back(
          memory_of_host_[static_cast<std::size_t>(peer)]);
    }
  }
  if (replication_pairs_.empty()) {
    commit_version(version, now_ns_);
    return;
  }
  replicating_version_ = version;
  replication_taken_ns_ = now_ns_;
  if (scenario_.run.contention) {
    replication_left_bytes_ = rank_state_bytes();
    return;
  }
  AloneInputs in{replication_pairs_, paths_.link_overrides(), rank_state_bytes(),
                 last_ ? training_share(*last_) : 0.0, links_down_};
  if (!alone_cache_ || !(alone_cache_->first == in)) {
    const TimeNs alone =
        replication_alone_ns(paths_.topology(), in.links, in.pairs, in.bytes, in.share);
    alone_cache_.emplace(std::move(in), alone);
  }
  replication_alone_ns_ = alone_cache_->second;
  replication_due_ns_ = -1;
}

void SimBackend::count_replication(TimeNs iteration_start_ns) {
  if (replication_alone_ns_ >= 0) {
    if (replication_due_ns_ < 0) replication_due_ns_ = iteration_start_ns + replication_alone_ns_;
    if (replication_due_ns_ <= iteration_start_ns + last_->iteration_ns) {
      commits_.push_back({replicating_version_, replication_taken_ns_, replication_due_ns_});
      commit_version(replicating_version_, replication_due_ns_);
      replication_alone_ns_ = replication_due_ns_ = -1;
      replicating_version_ = -1;
    }
    return;
  }
  if (replication_left_bytes_ <= 0) return;
  if (last_->snapshot_done_ns >= 0) {
    commits_.push_back({replicating_version_, replication_taken_ns_,
                        iteration_start_ns + last_->snapshot_done_ns});
    commit_version(replicating_version_, iteration_start_ns + last_->snapshot_done_ns);
    replication_left_bytes_ = 0;
    replicating_version_ = -1;
    return;
  }
  // Chunks in flight when the iteration ends still finish, so every pair
  // gets at least one chunk through an iteration.
  replication_left_bytes_ -= last_->snapshot_bytes_per_pair;
}

}  // namespace parashift::sim
