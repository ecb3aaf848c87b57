#include "core/controller/migrate_policy.hpp"

#include <algorithm>
#include <functional>
#include <set>
#include <variant>
#include <vector>

#include "core/controller/lower_median.hpp"
#include "core/controller/seconds_text.hpp"
#include "core/faults/fault_config.hpp"
#include "core/snapshot/remap.hpp"

namespace parashift::core {
namespace {

constexpr std::size_t kRecent = 32;

}  // namespace

TimeNs MigratePolicy::healthy_ns(std::int64_t before) const {
  std::vector<double> times;
  for (const auto& [iteration, ns] : recent_)
    if (iteration < before) times.push_back(static_cast<double>(ns));
  return static_cast<TimeNs>(lower_median(times));
}

void MigratePolicy::run(PolicyContext& context) {
  const StepReport* report = context.report;
  if (report == nullptr) return;
  recent_.emplace_back(context.iteration, report->iteration_ns);
  if (recent_.size() > kRecent) recent_.pop_front();
  const Capabilities& caps = context.capabilities;
  const JobModel& job = context.job;
  std::set<int> claimed;  // spare GPUs an earlier move of this turn took
  for (const StragglerFinding& f : context.stragglers) {
    if (f.kind != StragglerFinding::Kind::Gpu || f.slowdown < options_.min_slowdown) continue;
    const int rank = f.id;
    if (const auto moved = moved_at_.find(rank);
        moved != moved_at_.end() && f.since_iteration <= moved->second)
      continue;  // flagged before it moved: the detector has not caught up
    if (caps.spare_gpus.empty() || !caps.snapshots_to_host ||
        static_cast<std::size_t>(rank) >= caps.gpu_of_rank.size()) {
      if (!std::exchange(told_blind_, true))
        context.log.push_back(
            {context.iteration, "migrate",
             f.describe() + ": " +
                 (caps.spare_gpus.empty() ? "no spare GPU to move it to (faults.spares)"
                                          : "the backend takes no in-memory snapshot to move it "
                                            "with") +
                 ": endured",
             std::nullopt, false, 0, 0});
      continue;
    }
    const int gpu = caps.gpu_of_rank[static_cast<std::size_t>(rank)];
    auto place = [&](int g) { return caps.place_of_gpu.at(static_cast<std::size_t>(g)); };
    // The ranks that move: the slow GPU's, or every rank on its host.
    std::vector<LostRank> movers;
    for (std::size_t r = 0; r < caps.gpu_of_rank.size(); ++r) {
      const int g = caps.gpu_of_rank[r];
      if (g == gpu || (options_.whole_host && place(g).host == place(gpu).host))
        movers.push_back({static_cast<int>(r), g});
    }
    std::vector<int> spares;
    for (int s : caps.spare_gpus)
      if (!slow_hosts_.contains(place(s).host) && !claimed.contains(s)) spares.push_back(s);
    const RemapResult remap = remap_to_spares(movers, spares, place);
    // One rank moved off its host splits its tensor-parallel group over two
    // hosts (its collectives through a NIC): slower than enduring, so a
    // lone rank moves only onto a spare of its own host.
    const bool splits = !options_.whole_host && job.plan.tp > 1 && !remap.placed.empty() &&
                        remap.placed.front().nearness != Nearness::SameHost;
    if (splits) {
      if (!std::exchange(told_split_, true))
        context.log.push_back({context.iteration, "migrate",
                               f.describe() + ": no spare on its host, and moving rank " +
                                   std::to_string(rank) +
                                   " alone splits its tensor-parallel group: endured",
                               std::nullopt, false, 0, 0});
      continue;
    }
    const TimeNs healthy = healthy_ns(f.since_iteration);
    if (!remap.unplaced.empty() || healthy <= 0) {
      if (!remap.unplaced.empty() && !std::exchange(told_short_, true))
        context.log.push_back({context.iteration, "migrate",
                               f.describe() + ": " + std::to_string(movers.size()) +
                                   " ranks to move, fewer spare GPUs free: endured",
                               std::nullopt, false, 0, 0});
      continue;
    }
    const double remaining = static_cast<double>(
        std::max<std::int64_t>(0, job.total_iterations - context.iteration - 1));
    const double gain_s = ns_to_s(std::max<TimeNs>(0, report->iteration_ns - healthy)) * remaining;
    // Each GPU copies its own rank's state (in parallel over the host's).
    const double state_bytes = job.params_per_gpu_layer * job.layers / std::max(1, job.plan.pp) *
                               job.static_bytes_per_param;
    const double cost_s =
        2 * ns_to_s(SnapshotConfig{}.host_copy_ns(state_bytes)) + options_.reinit_s;
    const Placement& to = remap.placed.front();
    const std::string what =
        remap.placed.size() == 1
            ? "rank " + std::to_string(rank) + " to spare gpu " + std::to_string(to.to_gpu)
            : "the " + std::to_string(remap.placed.size()) + " ranks of host " +
                  std::to_string(place(gpu).host) + " to spare host " +
                  std::to_string(place(to.to_gpu).host);
    const std::string message =
        f.describe() + ": iteration " + seconds_text(ns_to_s(report->iteration_ns)) + " against " +
        seconds_text(ns_to_s(healthy)) + " before; " + what + " (" + to_string(to.nearness) + ")";
    if (gain_s <= cost_s) {
      context.log.push_back({context.iteration, "migrate", message + ": gains less than it costs",
                             std::nullopt, false, gain_s, cost_s});
      moved_at_[rank] = context.iteration;  // judged once per finding
      continue;
    }
    // The directives, each with its log entry (the runner pairs them in
    // order): the gain and the whole cost go with the first remap.
    const long long version = context.iteration + 1;  // the iteration that runs next
    const std::string why = "migrate: " + message;
    std::vector<Directive> steps{{SnapshotDirective{version}, why + ": state saved", 0}};
    for (const Placement& p : remap.placed)
      steps.push_back(p.rank == to.rank
                          ? Directive{RemapDirective{p.rank, p.to_gpu}, why, gain_s - cost_s}
                          : Directive{RemapDirective{p.rank, p.to_gpu},
                                      "migrate: with rank " + std::to_string(to.rank), 0});
    steps.push_back({RestoreDirective{version}, why + ": restored on the spare", 0});
    // Work the balancer moved off the slow replica (before, or this turn)
    // goes back: every replica runs on healthy GPUs again.
    const bool rebalanced = std::any_of(
        context.directives.begin(), context.directives.end(),
        [](const Directive& d) { return std::holds_alternative<RebalanceDirective>(d.action); });
    const std::vector<int>& split = job.micro_batches_per_replica;
    if (rebalanced ||
        std::adjacent_find(split.begin(), split.end(), std::not_equal_to<>()) != split.end())
      steps.push_back({RebalanceDirective{std::vector<int>(static_cast<std::size_t>(job.plan.dp),
                                                           job.plan.micro_batches())},
                       why + ": the even split back", 0});
    for (std::size_t k = 0; k < steps.size(); ++k) {
      const bool first_move = k == 1;
      context.directives.push_back(steps[k]);
      context.log.push_back({context.iteration, "migrate", steps[k].reason.substr(9), steps[k],
                             true, first_move ? gain_s : 0, first_move ? cost_s : 0});
    }
    for (const Placement& p : remap.placed) {
      moved_at_[p.rank] = context.iteration;
      claimed.insert(p.to_gpu);
    }
    slow_hosts_.insert(place(gpu).host);
  }
}

}  // namespace parashift::core
