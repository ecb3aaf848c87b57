// SimBackend's failures: the scenario's kill events, its fail events on
// GPUs, NICs, nodes, racks and links, and the failures its rates draw
// (faults.gpu_mtbf_hours, ...: what `faults` draws for its seed 0), each
// reported by the step it happens before. A failed link is a cable out of
// service: routes avoid it from then on, and a GPU it cut off from the rest
// of the cluster fails with it. Under faults.replace host (the default) a
// failed GPU's or NIC's host is drained for the repair: its other GPUs are
// reported as kind "drain".
#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "core/input_error.hpp"
#include "sim/faults/failure_events.hpp"
#include "sim/sim_backend.hpp"

namespace parashift::sim {

namespace {

// The GPUs a fail event takes: a GPU or its NIC (one per GPU on these
// topologies) the GPU, a node its GPUs, a rack its hosts' GPUs; a link none
// by itself (cut_off finds the GPUs it isolates).
std::vector<int> gpus_taken(const FailureEvent& f, const topo::Topology& t,
                            const core::FailureDomains& domains) {
  std::vector<int> out;
  if (f.kind == core::FailureKind::Link) return out;
  for (int g = 0; g < t.gpu_count(); ++g) {
    const int host = t.host_of_gpu(g);
    const bool taken = f.kind == core::FailureKind::Node ? host == f.target
                       : f.kind == core::FailureKind::Rack
                           ? domains.rack_of_host[static_cast<std::size_t>(host)] == f.target
                           : g == f.target;
    if (taken) out.push_back(g);
  }
  return out;
}

int find_root(std::vector<int>& parent, int v) {
  while (parent[static_cast<std::size_t>(v)] != v) {
    auto& p = parent[static_cast<std::size_t>(v)];
    p = parent[static_cast<std::size_t>(p)];
    v = p;
  }
  return v;
}

// The GPUs cut off from the cluster. Routes never pass through a GPU, so
// the switches and NICs joined by links in service form the parts of the
// fabric; the main part is the one the most GPUs have a link into, and a
// GPU with no link in service into it can reach only a few peers, or none.
std::vector<int> cut_off(const topo::Topology& t) {
  const auto is_gpu = [&](int v) { return t.node(v).kind == topo::NodeKind::Gpu; };
  std::vector<int> parent(static_cast<std::size_t>(t.node_count()));
  std::iota(parent.begin(), parent.end(), 0);
  for (const topo::LinkInfo& l : t.links())
    if (!l.down && !is_gpu(l.src) && !is_gpu(l.dst))
      parent[static_cast<std::size_t>(find_root(parent, l.src))] = find_root(parent, l.dst);
  // Each GPU's parts: those of the switches and NICs its links in service reach.
  std::vector<std::vector<int>> parts(static_cast<std::size_t>(t.gpu_count()));
  std::vector<int> gpus_into(parent.size(), 0);
  for (const topo::LinkInfo& l : t.links()) {
    if (l.down || !is_gpu(l.src) || is_gpu(l.dst)) continue;
    auto& mine = parts[static_cast<std::size_t>(t.node(l.src).gpu_index)];
    const int root = find_root(parent, l.dst);
    if (std::find(mine.begin(), mine.end(), root) != mine.end()) continue;
    mine.push_back(root);
    ++gpus_into[static_cast<std::size_t>(root)];
  }
  const auto main_part =
      static_cast<int>(std::max_element(gpus_into.begin(), gpus_into.end()) - gpus_into.begin());
  std::vector<int> out;
  for (int g = 0; g < t.gpu_count(); ++g) {
    const auto& mine = parts[static_cast<std::size_t>(g)];
    if (std::find(mine.begin(), mine.end(), main_part) == mine.end()) out.push_back(g);
  }
  return out;
}

}  // namespace

void SimBackend::read_failures() {
  if (!scenario_.faults) return;
  for (const core::FaultEvent& e : scenario_.faults->events) {
    if (e.kind == core::FaultEventKind::Fail && e.target == core::FailureKind::Maintenance)
      throw core::InputError(e.where +
                             ": maintenance is played by fault campaigns only (the simulator "
                             "does not drain); run `parashift faults " +
                             scenario_.file + "`, or fail a gpu, nic, node, rack or link here");
  }
  const topo::Topology& t = paths_.topology();
  const FailureTargets targets{t.gpu_count(), t.host_count(), fabric_links(t),
                               slots_.domains.racks()};
  std::vector<FailureEvent> failures = scheduled_failures(*scenario_.faults, targets, t);
  // And those drawn from the rates: the draw of `faults`' seed 0 for this
  // scenario (its GPU slots, its seed, over faults.days); planned
  // maintenance is the campaigns' alone.
  const core::FaultConfig& config = *scenario_.faults;
  for (const FailureEvent& f : draw_failures(config, failure_targets(slots_, scenario_.topology),
                                             campaign_draw_seed(scenario_.run.seed, 0),
                                             core::seconds_to_ns(config.days * 86400.0)))
    if (f.kind != core::FailureKind::Maintenance) failures.push_back(f);
  std::stable_sort(failures.begin(), failures.end(),
                   [](const FailureEvent& a, const FailureEvent& b) { return a.at_ns < b.at_ns; });
  for (const FailureEvent& f : failures)
    gpu_failures_.push_back(
        {f.at_ns, gpus_taken(f, t, slots_.domains),
         f.kind == core::FailureKind::Link ? f.target : -1,
         f.kind == core::FailureKind::Gpu || f.kind == core::FailureKind::Nic,
         f.kind == core::FailureKind::Node || f.kind == core::FailureKind::Rack});
}

bool SimBackend::has_failures() const {
  if (!gpu_failures_.empty()) return true;
  for (const core::FaultEvent& e : events_of(scenario_))
    if (e.kind == core::FaultEventKind::Kill) return true;
  return false;
}

std::vector<int> SimBackend::take_link_down(int link) {
  topo::Topology& t = *own_topology_;  // made for the scenario's link failures
  const topo::LinkInfo l = t.link(link);
  t.set_link_down(link);
  const topo::LinkId back = t.find_link(l.dst, l.src);  // the cable's other direction
  if (back >= 0) t.set_link_down(back);
  ++links_down_;
  paths_.routes_changed();
  return cut_off(t);
}

void SimBackend::repairs_due(TimeNs by_ns) {
  for (std::size_t g = 0; g < dead_.size(); ++g)
    if (dead_[g] && repair_at_[g] > 0 && repair_at_[g] <= by_ns) {
      dead_[g] = false;
      up_since_[g] = repair_at_[g];
      repair_at_[g] = 0;
    }
}

// As in the fault campaigns: the restore a new failure superseded
// (detection, restart, copy) never happened, only the time until the new
// failure passed.
void SimBackend::supersede_restore() {
  for (auto it = pending_applied_.rbegin(); it != pending_applied_.rend(); ++it)
    if (it->kind == "restore") {
      pending_move_ns_ -= std::exchange(it->ns, 0);
      return;
    }
}

bool SimBackend::wait_for_repairs(int ranks) {
  TimeNs back_ns = now_ns_;
  for (int r = 0; r < ranks; ++r) {
    const int g = gpu_of_rank(r);
    if (!dead_[static_cast<std::size_t>(g)]) continue;
    const TimeNs at = repair_at_[static_cast<std::size_t>(g)];
    if (at <= 0)
      throw std::invalid_argument("step with a rank on gpu " + std::to_string(g) +
                                  ", which failed and is not coming back");
    back_ns = std::max(back_ns, at);
  }
  if (back_ns == now_ns_) return false;
  // A failure during the wait is seen when it happens, not after the repair
  // (it may take the memory holding the state the restore needs): the wait
  // ends there, and the clock runs on to it (now_ns_ ahead of the time
  // steps have reported, until end_step).
  TimeNs until_ns = back_ns;
  if (gpu_failures_fired_ < gpu_failures_.size())
    until_ns = std::clamp(gpu_failures_[gpu_failures_fired_].at_ns, now_ns_, back_ns);
  // A recovery cut short is superseded by the next one, if one follows
  // (supersede_restore).
  restore_cut_short_ = until_ns < back_ns;
  // On top of the restart's detection and re-initialisation, as the
  // campaigns charge it: the wait from now until the last of them is back.
  pending_move_ns_ += until_ns - now_ns_;
  ahead_ns_ += until_ns - now_ns_;
  now_ns_ = until_ns;
  repairs_due(until_ns);
  return until_ns < back_ns;
}

std::vector<core::FailureSeen> SimBackend::gpu_failures_due() {
  const core::FaultConfig& config = fault_config();
  const TimeNs repair_ns = config.repair_ns;
  const bool replace_host = config.replace_host;
  std::vector<core::FailureSeen> out;
  const int ranks = plan_now().gpus();
  const std::vector<int> used = placement(ranks);
  for (; gpu_failures_fired_ < gpu_failures_.size() &&
         gpu_failures_[gpu_failures_fired_].at_ns <= now_ns_;
       ++gpu_failures_fired_) {
    std::vector<int> gpus = gpu_failures_[gpu_failures_fired_].gpus;
    const bool repaired = gpu_failures_[gpu_failures_fired_].link < 0;
    if (const int link = gpu_failures_[gpu_failures_fired_].link; link >= 0) {
      // The job's collectives fail on it (an NCCL error): every rank
      // restarts, on routes that avoid it.
      failed_ = true;
      out.push_back({"fail", "link " + paths_.topology().link(link).name, now_ns_, iteration_, {}});
      gpus = take_link_down(link);
    }
    // Out of service until repaired (repair_at_ > 0; 0: never, as a GPU a
    // failed cable cut off, even one already out): a rank that ran there is
    // lost, and the restore after it waits for the detection and restart.
    // The repair runs from the failure, which may be before this step (the
    // job was waiting for another repair): a GPU that was still out then
    // (back since) cannot fail, as in the campaigns. Whether `g` went out now.
    const TimeNs failed_at = gpu_failures_[gpu_failures_fired_].at_ns;
    auto take = [&](int g, const char* kind, std::string detail) {
      const auto i = static_cast<std::size_t>(g);
      if (!repaired) repair_at_[i] = 0;
      if (dead_[i] || (repaired && failed_at < up_since_[i])) return false;
      dead_[i] = true;
      if (repaired) repair_at_[i] = std::max<TimeNs>(1, failed_at + repair_ns);
      if (std::find(used.begin(), used.end(), g) != used.end()) failed_ = true;
      out.push_back({kind, "gpu " + std::to_string(g), now_ns_, iteration_, std::move(detail)});
      return true;
    };
    std::vector<int> taken;
    for (int g : gpus)
      if (take(g, "fail", {})) taken.push_back(g);
    // A node or rack: each host's memory dies with it, snapshot replicas
    // included (also a host already out, drained for a repair).
    if (gpu_failures_[gpu_failures_fired_].memory) {
      std::set<int> hosts;
      for (int g : gpus) hosts.insert(place_of_gpu_[static_cast<std::size_t>(g)].host);
      for (int host : hosts) lose_host_memory(host);
    }
    last_failure_ns_ = failed_at;
    // faults.replace host: a failed GPU's (or NIC's) host goes out for the
    // repair, as in the campaigns (replaced_gpus): its other GPUs are
    // drained with it and back with it.
    if (gpu_failures_[gpu_failures_fired_].drains && replace_host)
      for (int g : taken) {
        const int host = place_of_gpu_[static_cast<std::size_t>(g)].host;
        for (std::size_t mate = 0; mate < place_of_gpu_.size(); ++mate)
          if (place_of_gpu_[mate].host == host)
            take(static_cast<int>(mate), "drain",
                 "host " + std::to_string(host) + " out for repair with gpu " + std::to_string(g) +
                     ", faults.replace host");
      }
  }
  return out;
}

std::optional<core::FailureSeen> SimBackend::kill_due() {
  const auto& events = events_of(scenario_);
  for (std::size_t k = 0; k < events.size(); ++k) {
    const core::FaultEvent& e = events[k];
    if (e.kind != core::FaultEventKind::Kill || e.at_iteration != iteration_) continue;
    if (std::find(kills_fired_.begin(), kills_fired_.end(), k) != kills_fired_.end()) continue;
    kills_fired_.push_back(k);  // once: a restored run replays the iteration
    last_failure_ns_ = now_ns_;
    return core::FailureSeen{"kill", "rank " + std::to_string(e.rank), now_ns_, iteration_, {}};
  }
  return std::nullopt;
}

}  // namespace parashift::sim
