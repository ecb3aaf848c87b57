// Version choice, spare placement and the restore's moves of the snapshot
// policy (snapshot_run.hpp).
#include "sim/faults/snapshot_run.hpp"

namespace parashift::sim::detail {

// Newest version every shard still has; fills plan.version / moves.
// `state_lost`: every replica of some shard of the newest committed
// version died, so an older version or the remote checkpoint was used.
double SnapshotRun::restore(core::RecoveryPlan& plan, TimeNs now, bool& state_lost) {
  const ClusterSlots& slots = s_.slots;
  // Shards whose holders may have died: ranks that sat on a dead holder.
  core::ReplicaMap map;
  for (const Version& v : versions_) {
    for (int dead : dead_holders_) {
      const int host = dead / kIncarnations;
      if (holder(host, *v.incarnation) != dead) continue;
      for (int g : slots.gpus_of_host[static_cast<std::size_t>(host)]) {
        const int r = v.mapping->rank(g);
        if (r >= 0) add_holders(map, v, r, host, now);
      }
    }
  }
  // Every version must list the same shards: add the others' entries.
  for (const auto& [rank, by_version] : map.shards()) {
    (void)by_version;
    for (const Version& v : versions_) {
      const int host = host_of_rank(v, rank);
      if (host >= 0 && map.shards().at(rank).count(v.id) == 0) add_holders(map, v, rank, host, now);
    }
  }
  std::optional<long long> chosen;
  if (map.shards().empty()) {
    if (!versions_.empty()) chosen = versions_.back().id;
  } else if (const auto choice = core::choose_version({map, dead_holders_, {}, {}})) {
    chosen = choice->version;  // the loop's rule (no remote version here: below)
  }
  std::set<int> lost(pending_lost_.begin(), pending_lost_.end());
  double restored = remote_work_;
  const Version* committed = newest_committed(now);
  if (chosen) {
    plan.version = *chosen;
    restored = version(*chosen).work_s;
    if (committed && restored < committed->work_s - kWorkEpsS) {
      state_lost = true;
      ++run_.state_losses;
      const auto missing = core::shards_without_replica(map, committed->id, dead_holders_);
      char buf[200];
      std::snprintf(buf, sizeof buf, "; restored v%lld, %.1f s of work older",
                    static_cast<long long>(*chosen), committed->work_s - restored);
      plan.note = "every replica of rank " +
                  (missing.empty() ? std::string("?") : std::to_string(missing.front())) +
                  "'s shards of committed v" + std::to_string(committed->id) +
                  " died before re-replication" + buf;
      note(now, plan.note);
    }
    // Newer versions belong to the timeline rolled back.
    while (versions_.back().id > *chosen) versions_.pop_back();
  } else {
    plan.from_remote_checkpoint = true;
    plan.version = -1;
    if (!versions_.empty()) {
      const auto missing = core::shards_without_replica(map, versions_.back().id, dead_holders_);
      if (missing.empty())
        throw std::logic_error("remote fallback although every shard has a replica");
      state_lost = true;
      ++run_.state_losses;
      plan.note = "training state lost: every replica of rank " + std::to_string(missing.front()) +
                  "'s shards died before re-replication; restored from the remote checkpoint";
      note(now, plan.note);
    }
    versions_.clear();  // none usable; the remote checkpoint is the state now
    plan.reinit_ns = cfg_.baseline.restart_ns;
    plan.transfer_ns = s_.checkpoint_write_ns;
  }
  // Put lost ranks on spares.
  std::vector<core::LostRank> to_place;
  for (int r : lost) {
    const int g = mapping_->gpu(r);
    if (gpu_down_[static_cast<std::size_t>(g)]) to_place.push_back(core::LostRank{r, g});
  }
  const auto place_of = [&](int g) { return slots.place_of(g); };
  core::RemapResult remap = core::remap_to_spares(to_place, pool_, place_of);
  auto mapping = std::make_shared<Mapping>(*mapping_);
  for (const auto& p : remap.placed) {
    if (mapping->rank(p.from_gpu) == p.rank) mapping->set(p.from_gpu, -1);
    mapping->set(p.to_gpu, p.rank);
  }
  mapping_ = mapping;
  plan.remaps = remap.placed;
  // A rank moved alone (faults.replace gpu) splits its tensor-parallel
  // group over two hosts, and a host's ranks on a spare host in another
  // rack leave their leaves: the iteration from now on is the split or
  // moved one's. A move can also end a split or a stay off the rack (the
  // group's other rank follows it to the spare host; a rank moves back to
  // a spare in its rack): only the moved ranks' groups can have changed,
  // either way (set_plan looks at all).
  const core::RankLayout layout(plan_);
  for (const auto& p : remap.placed) {
    core::RankCoord c = layout.coord(p.rank);
    c.tp = 0;
    if (group_split(layout.rank(c))) {
      split_groups_.insert(layout.rank(c));
    } else {
      split_groups_.erase(layout.rank(c));
    }
    if (rank_off_rack(p.rank)) {
      off_rack_ranks_.insert(p.rank);
    } else {
      off_rack_ranks_.erase(p.rank);
    }
  }
  if (split_groups_.empty() == split_ || off_rack_ranks_.empty() == off_rack_)
    set_plan(plan_, batch_share_);
  if (chosen) {
    const Version& v = version(*chosen);
    std::vector<RestoreFlow> flows;
    for (int r : lost) {
      const int to_gpu = mapping_->gpu(r);
      if (to_gpu < 0 || gpu_down_[static_cast<std::size_t>(to_gpu)]) continue;  // unplaced
      const int from =
          surviving_holder(v, r, slots.host_of_gpu[static_cast<std::size_t>(to_gpu)], now);
      for (core::ShardKind kind : core::kShardKinds) {
        plan.moves.push_back(core::ShardMove{r, kind, v.id, from, to_gpu, state_.bytes(kind)});
      }
      flows.push_back(RestoreFlow{from, to_gpu, state_.total_bytes()});
    }
    // Every other rank rolls back from its own host's memory (PCIe), in parallel.
    plan.transfer_ns = std::max(s_.restore->transfer_ns(flows), copy_ns_);
  }
  core::check_moves_only_lost(plan, lost);
  if (!remap.unplaced.empty()) shrink(plan, remap, restored, now);
  return restored;
}

bool SnapshotRun::group_split(int rank) const {
  if (plan_.tp == 1) return false;
  const core::RankLayout layout(plan_);
  const auto& host_of = s_.slots.host_of_gpu;
  core::RankCoord c = layout.coord(rank);
  int host = -1;
  for (c.tp = 0; c.tp < plan_.tp; ++c.tp) {
    const int g = mapping_->gpu(layout.rank(c));
    if (g < 0) continue;
    const int h = host_of[static_cast<std::size_t>(g)];
    if (host >= 0 && h != host) return true;
    host = h;
  }
  return false;
}

bool SnapshotRun::rank_off_rack(int rank) const {
  const int g = mapping_->gpu(rank);
  if (g < 0 || rank >= s_.slots.gpus()) return false;
  const auto& host_of = s_.slots.host_of_gpu;
  const auto& rack_of = s_.slots.domains.rack_of_host;
  return rack_of[static_cast<std::size_t>(host_of[static_cast<std::size_t>(g)])] !=
         rack_of[static_cast<std::size_t>(host_of[static_cast<std::size_t>(rank)])];
}

bool SnapshotRun::off_rack() {
  off_rack_ranks_.clear();
  for (int r = 0; r < plan_.gpus(); ++r)
    if (rank_off_rack(r)) off_rack_ranks_.insert(r);
  return !off_rack_ranks_.empty();
}

bool SnapshotRun::tp_split() {
  split_groups_.clear();
  const core::RankLayout layout(plan_);
  for (int r = 0; r < layout.ranks(); ++r)
    if (layout.coord(r).tp == 0 && group_split(r)) split_groups_.insert(r);
  return !split_groups_.empty();
}

void SnapshotRun::add_holders(core::ReplicaMap& map, const Version& v, int rank, int host,
                              TimeNs now) const {
  std::vector<int> holders{holder(host, *v.incarnation)};
  if (v.complete_ns <= now) {
    for (int peer : core::peer_hosts(s_.slots.domains, host, cfg_.snapshot.replicas - 1,
                                     cfg_.snapshot.domain, v.down_hosts.get())) {
      holders.push_back(holder(peer, *v.incarnation));
    }
  }
  map.add(rank, v.id, holders);
}

int SnapshotRun::surviving_holder(const Version& v, int rank, int prefer_host, TimeNs now) const {
  const int host = host_of_rank(v, rank);
  std::vector<int> hosts{host};
  if (v.complete_ns <= now) {
    for (int p : core::peer_hosts(s_.slots.domains, host, cfg_.snapshot.replicas - 1,
                                  cfg_.snapshot.domain, v.down_hosts.get())) {
      hosts.push_back(p);
    }
  }
  int best = -1;
  for (int h : hosts) {
    if (dead_holders_.count(holder(h, *v.incarnation))) continue;
    if (h == prefer_host) return h;
    if (best < 0) best = h;
  }
  if (best < 0)
    throw std::logic_error("chosen version has no surviving replica of rank " +
                           std::to_string(rank));
  return best;
}

int SnapshotRun::host_of_rank(const Version& v, int rank) const {
  const int g = v.mapping->gpu(rank);
  return g < 0 ? -1 : s_.slots.host_of_gpu[static_cast<std::size_t>(g)];
}
const Version& SnapshotRun::version(long long id) const {
  for (const auto& v : versions_) {
    if (v.id == id) return v;
  }
  throw std::logic_error("unknown snapshot version " + std::to_string(id));
}

}  // namespace parashift::sim::detail
