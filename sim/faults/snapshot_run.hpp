// The snapshot + spares policy's state over one campaign run, shared by
// snapshot_policy.cpp (the run), snapshot_restore.cpp (version choice,
// spares, restore moves) and snapshot_resize.cpp (shrink and regrow).
// Private to sim/faults.
//
// Segment model: after a restore at seg_start with work w0 the job runs
// `every` iterations then stalls `stall` for the device -> host copy:
// cycle = every * it + stall. Snapshot j (1-based) is in host memory at
// seg_start + j * cycle with work w0 + j * every * it * batch_share, and is
// COMMITTED (replicated to its peer hosts) `replication` later while
// training goes on. A restore also re-replicates: the restored state is a
// fresh version at seg_start. The run starts from version 0 (the initial
// state, committed at time 0). Versions are materialised lazily at events.
//
// Lost-work bound, by design: `every` is core::snapshot_cadence(interval,
// iteration, replication) for the plan in use, so consecutive committed
// versions are at most commit gap = every * it + replication <= interval
// of work apart, and a failure loses at most the work since the newest
// committed version. Each host keeps the newest keep_versions versions, but
// a version in flight never evicts the newest committed one (pinned until
// the next commits): a failure in the replication window that takes the
// owner's memory falls back to it, still within the bound. Versions newer
// than the one restored belong to the abandoned timeline and are dropped.
//
// Invariants checked at every interruption (std::logic_error when broken):
//   * a restore moves only the lost ranks' shards (core::check_moves_only_lost);
//   * the work since the newest committed version is at most the commit gap;
//   * lost work is at most the commit gap, unless the failures took every
//     replica of some shard of the newest committed version (more failure
//     domains than replicas lost before re-replication, or a failure while a
//     resize's fresh snapshot commits): a state loss, counted and noted, and
//     restored from an older version or the remote checkpoint.
//
// Replica holders are (host, incarnation): a host's memory dies with the
// node, and a repaired host starts empty as a new incarnation.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <memory>
#include <set>
#include <stdexcept>

#include "core/rank_layout.hpp"
#include "core/snapshot/interval.hpp"
#include "core/snapshot/recovery_plan.hpp"
#include "core/snapshot/replica_map.hpp"
#include "core/snapshot/shrink.hpp"
#include "core/snapshot/snapshot_holdings.hpp"
#include "sim/faults/policy_run.hpp"
#include "sim/faults/rank_mapping.hpp"
#include "sim/kernel.hpp"

#include <optional>
#include <string>
#include <vector>

namespace parashift::sim::detail {

constexpr int kIncarnations = 1 << 16;
constexpr std::size_t kMaxNotes = 8;
constexpr double kWorkEpsS = 1e-6;  // work is summed in double seconds

struct Version {
  long long id = 0;
  double work_s = 0;
  TimeNs taken_ns = 0;
  TimeNs complete_ns = 0;  // committed: replicated to every peer host
  std::shared_ptr<const Mapping> mapping;
  std::shared_ptr<const std::vector<int>> incarnation;
  std::shared_ptr<const std::set<int>> down_hosts;  // could not receive replicas
};

class SnapshotRun {
 public:
  SnapshotRun(CampaignSetup& setup, TimeNs horizon_ns)
      : s_(setup), cfg_(setup.config), horizon_ns_(horizon_ns), plan_(setup.scenario->plan) {
    const ClusterSlots& slots = s_.slots;
    auto mapping = std::make_shared<Mapping>();
    mapping->rank_of_gpu.assign(static_cast<std::size_t>(slots.gpus()), -1);
    for (int g = 0; g < slots.topology_gpus && g < plan_.gpus(); ++g) mapping->set(g, g);
    mapping_ = mapping;
    incarnation_ = std::make_shared<std::vector<int>>(static_cast<std::size_t>(slots.hosts()), 0);
    down_hosts_ = std::make_shared<std::set<int>>();
    gpu_down_.assign(static_cast<std::size_t>(slots.gpus()), 0);
    repair_at_ns_.assign(static_cast<std::size_t>(slots.gpus()), 0);
    pool_ = slots.spare_gpus;
    original_dp_ = plan_.dp;
    set_plan(plan_, 1.0);
    push_version(0, 0);
    versions_.back().complete_ns = 0;  // the initial state, loaded everywhere
    run_.wall_s = core::ns_to_s(horizon_ns);
  }

  PolicyRun run(const std::vector<FailureEvent>& failures, const std::vector<SlowEpisode>& slow) {
    for (const FailureEvent& f : failures) {
      if (f.at_ns >= horizon_ns_) break;
      kernel_.schedule_at(f.at_ns, [this, f] { on_failure(f); });
    }
    for (const SlowEpisode& e : slow) {
      if (e.at_ns >= horizon_ns_) break;
      kernel_.schedule_at(e.at_ns, [this, e] { on_slow(e); });
    }
    kernel_.run_until(horizon_ns_);
    const double work = training_ ? close_segment(horizon_ns_) : pending_work_;
    run_.useful_s = work - slow_work_lost();
    return run_;
  }

 private:
  // ---- the training segment -------------------------------------------------
  void set_plan(const core::ParallelPlan& plan, double batch_share) {
    plan_ = plan;
    batch_share_ = batch_share;
    timing_ = s_.times->get(plan_);
    split_ = tp_split();     // a tensor-parallel group over two hosts paces the job
    off_rack_ = off_rack();  // so does a rank away from its launch rack
    if (split_) timing_.iteration_ns = s_.times->split_ns(plan_);
    if (off_rack_)
      timing_.iteration_ns = std::max(timing_.iteration_ns, s_.times->off_rack_ns(plan_));
    // Work in nominal-plan seconds: this plan's batch share at its own pace.
    share_ = batch_share * static_cast<double>(s_.nominal.iteration_ns) /
             static_cast<double>(std::max<TimeNs>(1, timing_.iteration_ns));
    state_ = core::rank_state(s_.scenario->model, plan_, s_.scenario->training.seq_len);
    copy_ns_ = cfg_.snapshot.host_copy_ns(state_.total_bytes());
    stall_ns_ = cfg_.snapshot.stall_ns(state_.total_bytes(), timing_.snapshot_window_ns);
    // Replication is bandwidth-bound: a re-sharded (shrunk) plan's larger
    // rank state takes proportionally longer.
    repl_ns_ =
        state_.total_bytes() == s_.state.total_bytes() || s_.state.total_bytes() <= 0
            ? s_.replication_ns
            : static_cast<TimeNs>(std::llround(static_cast<double>(s_.replication_ns) *
                                               state_.total_bytes() / s_.state.total_bytes()));
    const core::SnapshotCadence cadence =
        core::snapshot_cadence(s_.snapshot_interval_ns, timing_.iteration_ns, repl_ns_);
    every_ = cadence.every;
    gap_ns_ = cadence.commit_gap_ns;
    run_ns_ = every_ * timing_.iteration_ns;
    cycle_ns_ = run_ns_ + stall_ns_;
  }
  double work_of(TimeNs run_time_ns) const { return core::ns_to_s(run_time_ns) * share_; }

  // Versions taken in the segment up to `t`, and the remote checkpoint.
  void materialize(TimeNs t) {
    if (!training_ || t < seg_ns_) return;
    const long long last_j = (t - seg_ns_) / cycle_ns_;
    // keep_versions + 1: the newest may still be in flight at t.
    for (long long j = std::max(seg_j_ + 1, last_j - cfg_.snapshot.keep_versions); j <= last_j;
         ++j) {
      const TimeNs taken = seg_ns_ + j * cycle_ns_;
      push_version(w0_ + work_of(j * run_ns_), taken);
    }
    seg_j_ = std::max(seg_j_, last_j);
    evict(t);
    // Remote checkpoints: every checkpoint interval, the newest version is
    // written from host memory in the background (no stall).
    const TimeNs every_remote = std::max<TimeNs>(1, s_.checkpoint_interval_ns);
    const TimeNs b = (t - s_.checkpoint_write_ns) / every_remote * every_remote;
    if (b >= seg_ns_ && t >= s_.checkpoint_write_ns) {
      remote_work_ = std::max(remote_work_, w0_ + work_of((b - seg_ns_) / cycle_ns_ * run_ns_));
    }
  }

  void push_version(double work, TimeNs taken) {
    Version v;
    v.id = next_version_++;
    v.work_s = work;
    v.taken_ns = taken;
    v.complete_ns = taken + repl_ns_;
    v.mapping = mapping_;
    v.incarnation = incarnation_;
    v.down_hosts = down_hosts_;
    versions_.push_back(std::move(v));
    evict(taken);
  }

  // Drops the oldest versions beyond keep_versions, never the newest one
  // committed at `t` (commit times grow with the version id).
  void evict(TimeNs t) {
    const auto keep = static_cast<std::size_t>(cfg_.snapshot.keep_versions);
    while (versions_.size() > keep && versions_.size() >= 2 && versions_[1].complete_ns <= t) {
      versions_.pop_front();
    }
  }

  // The newest version committed at `t` (nullptr: none in this rank numbering).
  const Version* newest_committed(TimeNs t) const {
    for (auto it = versions_.rbegin(); it != versions_.rend(); ++it) {
      if (it->complete_ns <= t) return &*it;
    }
    return nullptr;
  }

  // Ends the running segment at `t`: accounts stall and training time,
  // returns the work reached (a partial iteration counts, and is lost).
  double close_segment(TimeNs t) {
    materialize(t);
    const TimeNs e = t - seg_ns_;
    const TimeNs cycles = e / cycle_ns_;
    const TimeNs rem = e - cycles * cycle_ns_;
    run_.stall_s += core::ns_to_s(cycles * stall_ns_ + std::max<TimeNs>(0, rem - run_ns_));
    const TimeNs ran = cycles * run_ns_ + std::min(rem, run_ns_);
    run_.training_s += core::ns_to_s(ran);
    if (t > seg_ns_) trained_.push_back({seg_ns_, t});
    training_ = false;
    last_iteration_work_ = w0_ + work_of(ran / timing_.iteration_ns * timing_.iteration_ns);
    return w0_ + work_of(ran);
  }

  void start_segment(TimeNs at, double work) {
    training_ = true;
    seg_ns_ = at;
    w0_ = work;
    seg_j_ = 0;
    push_version(work, at);  // re-replication of the restored state
  }

  // ---- failures ------------------------------------------------------------
  int holder(int host, const std::vector<int>& incarnation) const {
    return host * kIncarnations + incarnation[static_cast<std::size_t>(host)] % kIncarnations;
  }

  // What stops the job: a failure, or an announced stop that saves the
  // state first (planned maintenance, a move off a fail-slow GPU).
  enum class Cause { Failure, Maintenance, Migration };

  void on_failure(const FailureEvent& f) {
    const ClusterSlots& slots = s_.slots;
    // Planned maintenance: announced, the host out for its duration.
    const bool planned = f.kind == core::FailureKind::Maintenance;
    const TimeNs out_ns = planned ? cfg_.maintenance.duration_ns : cfg_.repair_ns;
    std::vector<int> gpus;
    std::vector<int> dead_hosts;  // a node, or every host of a rack not already down
    if (f.kind == core::FailureKind::Gpu || f.kind == core::FailureKind::Nic) {
      gpus = replaced_gpus(f.target);
    } else if (f.kind == core::FailureKind::Node || planned) {
      dead_hosts.push_back(f.target);
    } else if (f.kind == core::FailureKind::Rack) {
      for (int h : slots.domains.hosts_of_rack[static_cast<std::size_t>(f.target)])
        if (!down_hosts_->count(h)) dead_hosts.push_back(h);
    }
    for (int h : dead_hosts) {
      const auto& on_host = slots.gpus_of_host[static_cast<std::size_t>(h)];
      gpus.insert(gpus.end(), on_host.begin(), on_host.end());
    }
    interrupt(f.at_ns, gpus, dead_hosts, f.kind == core::FailureKind::Link,
              planned ? Cause::Maintenance : Cause::Failure, out_ns);
  }

  // `gpus` (and `dead_hosts`, their memory with them) out of service from
  // `now` for `out_ns`; `link`: a fabric link (no GPU lost).
  void interrupt(TimeNs now, const std::vector<int>& gpus, const std::vector<int>& dead_hosts,
                 bool link, Cause cause, TimeNs out_ns) {
    const bool planned = cause != Cause::Failure;
    std::vector<int> newly_lost;
    bool hit = link;
    for (int g : gpus) {
      if (gpu_down_[static_cast<std::size_t>(g)]) continue;
      hit = hit || mapping_->rank(g) >= 0;
    }
    if (!hit) {
      // Only idle spares: out of the pool until repaired; a host's memory
      // (the replicas it kept for peers) dies with it.
      if (training_) materialize(now);
      take_down_all(gpus, dead_hosts, now, out_ns);
      return;
    }
    const bool was_training = training_;
    double work_at_stop = training_ ? close_segment(now) : pending_work_;
    TimeNs drain_ns = 0;
    if (planned && was_training) work_at_stop = drain(now, work_at_stop, drain_ns);
    ++run_.interruptions;
    run_.planned += cause == Cause::Maintenance ? 1 : 0;
    run_.migrations += cause == Cause::Migration ? 1 : 0;
    // The bound of the plan the work was done under (restore may re-plan).
    const double bound_s = work_of(gap_ns_);
    run_.lost_work_bound_s = std::max(run_.lost_work_bound_s, bound_s);
    const Version* committed = newest_committed(now);
    const double committed_work = committed ? committed->work_s : 0;
    if (committed && work_at_stop - committed_work > bound_s + kWorkEpsS) {
      invariant_broken(
          now, "work since the newest committed version (v" + std::to_string(committed->id) + ")",
          work_at_stop - committed_work, bound_s);
    }
    for (int g : gpus) {
      const int r = mapping_->rank(g);
      if (r >= 0 && !gpu_down_[static_cast<std::size_t>(g)]) newly_lost.push_back(r);
    }
    take_down_all(gpus, dead_hosts, now, out_ns);

    core::RecoveryPlan plan;
    plan.detect_ns = planned ? drain_ns : cfg_.heartbeat_timeout_ns;
    plan.reinit_ns = cfg_.reinit_ns;
    double restored = 0;
    bool state_lost = false;
    if (newly_lost.empty() && pending_lost_.empty()) {
      // A fabric link: state intact in GPU memory; redo the current iteration.
      restored = in_recovery_ ? pending_work_ : last_iteration_work_;
      plan.version = versions_.empty() ? 0 : versions_.back().id;
    } else {
      for (int r : newly_lost) pending_lost_.insert(r);
      restored = restore(plan, now, state_lost);
    }
    const TimeNs end = now + plan.total_ns();
    const double lost = std::max(0.0, work_at_stop - restored);
    if (!state_lost && lost > bound_s + kWorkEpsS) {
      invariant_broken(now, "lost work (restored v" + std::to_string(plan.version) + ")", lost,
                       bound_s);
    }
    run_.lost_work_s.push_back(lost);
    run_.recovery_s.push_back(core::ns_to_s(plan.total_ns()));
    pending_work_ = restored;
    in_recovery_ = true;
    const std::uint64_t ticket = ++recovery_ticket_;
    kernel_.schedule_at(end, [this, ticket, end] {
      if (ticket != recovery_ticket_) return;  // superseded by a later failure
      in_recovery_ = false;
      pending_lost_.clear();
      start_segment(end, pending_work_);
      maybe_regrow();  // GPUs repaired during the recovery
    });
  }

  [[noreturn]] void invariant_broken(TimeNs now, const std::string& what, double value_s,
                                     double bound_s) const {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "invariant broken at t=%.3f s: %s is %.3f s, more than the commit gap %.3f s "
                  "(snapshot interval %.3f s)",
                  core::ns_to_s(now), what.c_str(), value_s, bound_s,
                  core::ns_to_s(s_.snapshot_interval_ns));
    throw std::logic_error(buf);
  }

  void note(TimeNs now, const std::string& text) {
    if (run_.notes.size() < kMaxNotes) {
      run_.notes.push_back("t=" + std::to_string(core::ns_to_s(now)) + " s: " + text);
    }
  }

  void kill_host_memory(int host) {
    dead_holders_.insert(holder(host, *incarnation_));
    auto next = std::make_shared<std::vector<int>>(*incarnation_);
    ++(*next)[static_cast<std::size_t>(host)];
    incarnation_ = next;
  }

  // Announced maintenance at `now`, the job training: the iteration in
  // flight finishes, the state is saved (device -> host copy) and replicated
  // before the host goes, so nothing is lost. Returns the work saved, the
  // version committed at its end; `drain_ns` is the time from `now` to it.
  double drain(TimeNs now, double work_at_stop, TimeNs& drain_ns) {
    const double partial = work_at_stop - last_iteration_work_;
    TimeNs finish_ns = 0;
    double saved = work_at_stop;
    if (partial > kWorkEpsS) {
      finish_ns = std::max<TimeNs>(
          0, timing_.iteration_ns - core::seconds_to_ns(partial / std::max(share_, 1e-12)));
      saved = last_iteration_work_ + work_of(timing_.iteration_ns);
      run_.training_s += core::ns_to_s(finish_ns);
    }
    // The copy has no next iteration to hide under: recovery time, whole.
    drain_ns = finish_ns + copy_ns_ + repl_ns_;
    push_version(saved, now);
    versions_.back().complete_ns = now;  // replicated within the drain, before the host goes
    return saved;
  }

  // A GPU or NIC (no host), or whole hosts (their memory dies with them);
  // back in service `out_ns` later.
  void take_down_all(const std::vector<int>& gpus, const std::vector<int>& hosts, TimeNs now,
                     TimeNs out_ns) {
    if (hosts.empty()) return take_down(gpus, -1, now, out_ns);
    for (int h : hosts) {
      kill_host_memory(h);
      take_down(s_.slots.gpus_of_host[static_cast<std::size_t>(h)], h, now, out_ns);
    }
  }

  void take_down(const std::vector<int>& gpus, int host, TimeNs now, TimeNs out_ns) {
    for (int g : gpus) {
      if (gpu_down_[static_cast<std::size_t>(g)]) continue;
      gpu_down_[static_cast<std::size_t>(g)] = 1;
      repair_at_ns_[static_cast<std::size_t>(g)] = now + out_ns;
      pool_.erase(std::remove(pool_.begin(), pool_.end(), g), pool_.end());
    }
    if (host >= 0) {
      auto next = std::make_shared<std::set<int>>(*down_hosts_);
      next->insert(host);
      down_hosts_ = next;
    }
    kernel_.schedule_at(now + out_ns, [this, gpus, host] { on_repair(gpus, host); });
  }

  void on_repair(const std::vector<int>& gpus, int host) {
    if (training_) materialize(kernel_.now());
    for (int g : gpus) {
      if (!gpu_down_[static_cast<std::size_t>(g)]) continue;
      gpu_down_[static_cast<std::size_t>(g)] = 0;
      if (mapping_->rank(g) < 0) pool_.push_back(g);  // its rank moved to a spare
    }
    std::sort(pool_.begin(), pool_.end());
    if (host >= 0) {
      auto next = std::make_shared<std::set<int>>(*down_hosts_);
      next->erase(host);
      down_hosts_ = next;
    }
    maybe_regrow();
  }

  // Newest version every shard still has; fills plan.version / moves.
  // `state_lost`: every replica of some shard of the newest committed
  // version died, so an older version or the remote checkpoint was used
  // (snapshot_restore.cpp).
  double restore(core::RecoveryPlan& plan, TimeNs now, bool& state_lost);
  void add_holders(core::ReplicaMap& map, const Version& v, int rank, int host, TimeNs now) const;
  int surviving_holder(const Version& v, int rank, int prefer_host, TimeNs now) const;
  int host_of_rank(const Version& v, int rank) const;
  const Version& version(long long id) const;

  // The GPUs a failed or slow `gpu` takes out: its host's (memory intact),
  // or itself alone (faults.replace).
  std::vector<int> replaced_gpus(int gpu) const {
    if (!cfg_.replace_host) return {gpu};
    const ClusterSlots& slots = s_.slots;
    return slots
        .gpus_of_host[static_cast<std::size_t>(slots.host_of_gpu[static_cast<std::size_t>(gpu)])];
  }

  // Whether some tensor-parallel group's ranks sit on two hosts, or
  // `rank`'s group's (snapshot_restore.cpp).
  bool tp_split();  // fills split_groups_
  bool group_split(int rank) const;
  // Whether some rank (fills off_rack_ranks_), or `rank`, runs in a rack other than its GPU's at
  // launch.
  bool off_rack();
  bool rank_off_rack(int rank) const;

  // ---- fail-slow episodes (snapshot_slow.cpp) --------------------------------
  void on_slow(const SlowEpisode& e);
  void on_slow_seen(const SlowEpisode& e, int rank, double lost_share);
  double slow_work_lost();

  // ---- no spare left, and spares back (snapshot_resize.cpp) -----------------
  void shrink(core::RecoveryPlan& plan, const core::RemapResult& remap, double restored,
              TimeNs now);
  void maybe_regrow();

  CampaignSetup& s_;
  const core::FaultConfig& cfg_;
  TimeNs horizon_ns_;
  core::ParallelPlan plan_;
  PlanTiming timing_;
  bool split_ = false;                           // tp_split() when timing_ was set
  bool off_rack_ = false;                        // off_rack() when timing_ was set
  std::set<int> split_groups_, off_rack_ranks_;  // tp-0 ranks of split groups; ranks off their rack
  core::RankState state_;
  double share_ = 1;        // work per second of training, in nominal-plan seconds
  double batch_share_ = 1;  // the plan's global batch over the scenario's
  TimeNs copy_ns_ = 0;      // one rank's state device <-> host (a restore, a drain)
  TimeNs stall_ns_ = 0, run_ns_ = 0, cycle_ns_ = 1;
  TimeNs every_ = 1;
  TimeNs repl_ns_ = 0;  // replication of one version under the plan in use
  TimeNs gap_ns_ = 0;   // commit gap: every_ iterations + repl_ns_
  int original_dp_ = 1;

  Kernel kernel_;
  bool training_ = true;
  bool in_recovery_ = false;
  std::uint64_t recovery_ticket_ = 0;
  TimeNs seg_ns_ = 0;
  double w0_ = 0;
  long long seg_j_ = 0;
  double pending_work_ = 0;
  double last_iteration_work_ = 0;
  double remote_work_ = 0;
  std::set<int> pending_lost_;

  std::shared_ptr<const Mapping> mapping_;
  std::shared_ptr<const std::vector<int>> incarnation_;
  std::shared_ptr<const std::set<int>> down_hosts_;
  std::vector<char> gpu_down_;
  std::vector<TimeNs> repair_at_ns_;  // by GPU: when a down one is back
  std::vector<int> pool_;
  std::set<int> dead_holders_;
  std::deque<Version> versions_;
  long long next_version_ = 1;
  std::vector<Interval> trained_;     // the segments, in time order
  std::vector<SlowSpan> slow_spans_;  // each: a rank on a slow GPU
  PolicyRun run_;
};

}  // namespace parashift::sim::detail
