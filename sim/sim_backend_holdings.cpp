// SimBackend's ledger of what survives of its snapshots, which JobRunner's
// recovery reads (Capabilities::snapshot_holdings) to choose the version it
// restores, as the fault campaigns choose (sim/faults/snapshot_restore.cpp):
//   * a snapshot puts each rank's state in its host's memory; once its
//     replication commits, also in the memories of its peer hosts;
//   * a node or rack failure kills its hosts' memories (a repaired host
//     comes back empty, with a new memory id); a GPU or NIC failure does not;
//   * each host keeps the newest faults.snapshot.keep_versions versions, and
//     never evicts the newest committed one while a newer one replicates;
//   * every faults.baseline.checkpoint_interval the newest version taken is
//     written to remote storage in the background, readable once written
//     (checkpoint bytes / storage bandwidth later); before the first, the
//     remote copy is the initial state (version 0).
#include <algorithm>
#include <numeric>
#include <optional>

#include "core/snapshot/failure_domains.hpp"
#include "core/snapshot/rank_state.hpp"
#include "sim/faults/failure_events.hpp"
#include "sim/sim_backend.hpp"

namespace parashift::sim {

void SimBackend::init_holdings() {
  memory_of_host_.resize(static_cast<std::size_t>(slots_.hosts()));
  std::iota(memory_of_host_.begin(), memory_of_host_.end(), 0);
  next_memory_ = slots_.hosts();
  if (!scenario_.faults) return;
  const core::FaultConfig& config = *scenario_.faults;
  const double bytes = core::checkpoint_bytes(
      core::rank_state(scenario_.model, scenario_.plan, scenario_.training.seq_len),
      scenario_.plan);
  checkpoint_read_ns_ = core::transfer_ns(bytes, config.baseline.storage_Bps);
  const double mtbf_s =
      mtbf_s_of(failures_per_hour(config, failure_targets(slots_, scenario_.topology)));
  remote_every_ns_ =
      std::max<TimeNs>(1, core::seconds_to_ns(core::checkpoint_interval_s(
                              config.baseline, core::ns_to_s(checkpoint_read_ns_), mtbf_s)));
  remote_next_ns_ = remote_every_ns_;
}

void SimBackend::hold_version(long long version) {
  const int ranks = plan_now().gpus();
  HeldVersion v;
  v.version = version;
  v.taken_ns = now_ns_;
  v.holders.resize(static_cast<std::size_t>(ranks));
  v.peers.resize(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    const int host = slots_.host_of_gpu[static_cast<std::size_t>(gpu_of_rank(r))];
    v.holders[static_cast<std::size_t>(r)].push_back(
        memory_of_host_[static_cast<std::size_t>(host)]);
  }
  held_.push_back(std::move(v));
  evict_versions();
}

void SimBackend::evict_versions() {
  // The newest keep_versions, and the newest committed one while newer
  // ones replicate (or never will: superseded, or cut by a restore).
  const auto keep = static_cast<std::size_t>(std::max(1, snapshot_config().keep_versions));
  if (held_.size() <= keep) return;
  std::optional<long long> pinned;
  for (auto v = held_.rbegin(); v != held_.rend() && !pinned; ++v)
    if (v->committed_ns >= 0) pinned = v->version;
  std::deque<HeldVersion> kept;
  for (std::size_t i = 0; i < held_.size(); ++i)
    if (i + keep >= held_.size() || held_[i].version == pinned) kept.push_back(std::move(held_[i]));
  held_ = std::move(kept);
}

void SimBackend::commit_version(long long version, TimeNs at_ns) {
  for (HeldVersion& v : held_)
    if (v.version == version && v.committed_ns < 0) v.committed_ns = at_ns;
  evict_versions();
}

void SimBackend::lose_host_memory(int host) {
  int& memory = memory_of_host_[static_cast<std::size_t>(host)];
  dead_memories_.insert(memory);
  memory = next_memory_++;
}

void SimBackend::restored(long long version, bool from_remote) {
  const int ranks = plan_now().gpus();
  if (from_remote) {
    held_.clear();
    // The state read back is in the ranks' memories: restorable from there.
    if (std::find(snapshots_.begin(), snapshots_.end(), version) == snapshots_.end())
      snapshots_.push_back(version);
  }
  while (!held_.empty() && held_.back().version > version) held_.pop_back();
  // Restored into another number of ranks (a shrink before the restore):
  // the old versions' shards are the old ranks'. As the campaigns do after
  // a resize, the restored state is the only version, held by the ranks'
  // hosts and replicated again.
  const bool resized =
      !held_.empty() && held_.back().holders.size() != static_cast<std::size_t>(ranks);
  if (resized) held_.clear();
  const bool fresh = held_.empty() || held_.back().version != version;
  if (fresh) {
    HeldVersion v;
    v.version = version;
    v.taken_ns = now_ns_;
    v.holders.resize(static_cast<std::size_t>(ranks));
    v.peers.resize(static_cast<std::size_t>(ranks));
    held_.push_back(std::move(v));
  }
  HeldVersion& v = held_.back();
  // Each rank's host fetched its state into memory and copied it to the
  // GPU; a rank waiting for its GPU's repair loads it only then.
  for (int r = 0; r < ranks; ++r) {
    const int gpu = gpu_of_rank(r);
    if (dead_[static_cast<std::size_t>(gpu)]) continue;
    const int host = slots_.host_of_gpu[static_cast<std::size_t>(gpu)];
    auto& holders = v.holders[static_cast<std::size_t>(r)];
    const int memory = memory_of_host_[static_cast<std::size_t>(host)];
    if (std::find(holders.begin(), holders.end(), memory) == holders.end())
      holders.push_back(memory);
  }
  if (resized) start_replication(version);
}

void SimBackend::write_remote_checkpoints() {
  if (remote_every_ns_ <= 0) return;
  while (remote_next_ns_ + checkpoint_read_ns_ <= now_ns_) {
    // The newest version taken by the checkpoint's start, written from host memory.
    for (auto v = held_.rbegin(); v != held_.rend(); ++v)
      if (v->taken_ns <= remote_next_ns_) {
        remote_version_ = std::max(remote_version_, v->version);
        break;
      }
    remote_next_ns_ += remote_every_ns_;
  }
}

core::SnapshotHoldings SimBackend::snapshot_holdings() const {
  core::SnapshotHoldings out;
  for (const HeldVersion& v : held_) {
    // Peers hold a version once it committed before the latest failure
    // (a commit due later in the iteration that failure cut is not made).
    const bool committed = v.committed_ns >= 0 && v.committed_ns <= last_failure_ns_;
    for (std::size_t r = 0; r < v.holders.size(); ++r) {
      std::vector<int> holders = v.holders[r];
      if (committed) holders.insert(holders.end(), v.peers[r].begin(), v.peers[r].end());
      out.replicas.add(static_cast<int>(r), v.version, std::move(holders));
    }
    if (committed) out.committed = v.version;
  }
  out.dead_holders = dead_memories_;
  out.remote = remote_version_;
  return out;
}

}  // namespace parashift::sim
