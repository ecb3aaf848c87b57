#include "core/controller/job_runner.hpp"

#include <chrono>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <memory>
#include <set>
#include <utility>
#include <variant>

#include "core/cost/work_profile.hpp"
#include "core/faults/fault_config.hpp"
#include "core/input_error.hpp"
#include "core/scenario/cluster_view.hpp"
#include "core/scenario/scenario.hpp"
#include "core/snapshot/shrink.hpp"

namespace parashift::core {

JobRunner::JobRunner(Backend& backend, ParallelPlan plan)
    : backend_(backend), plan_(std::move(plan)), original_(plan_) {}

void JobRunner::set_controller(Controller controller) {
  controller_.emplace(std::move(controller));
}

std::vector<std::string> enabled_modules(const PolicyConfig& policy) {
  std::vector<std::string> names;
  for (const auto& m : policy.modules)
    if (m.enabled) names.push_back(m.name);
  return names;
}

void JobRunner::set_policy(const Scenario& scenario, std::int64_t total_iterations) {
  set_policy(scenario, total_iterations,
             CostInputs{scenario.model,
                        scenario.device,
                        cluster_view_of(scenario.topology, scenario.device, scenario.nccl_algo),
                        scenario.training.seq_len,
                        CostOptions{},
                        {},
                        scenario.device_groups});
}

void JobRunner::set_policy(const Scenario& scenario, std::int64_t total_iterations,
                           CostInputs cost) {
  if (enabled_modules(scenario.policy).empty()) return;
  JobModel job =
      make_job_model(cost.model, cost.device, plan_, cost.work(cost.device, plan_), cost.seq_len,
                     total_iterations, std::max(1, scenario.topology.gpus_per_host()));
  limit_memory_by_group(job, cost.device_groups, cost.device);
  job.cost = std::make_shared<const CostInputs>(std::move(cost));
  set_controller(Controller(std::move(job), scenario.policy, backend_.capabilities()));
}

void JobRunner::set_faults(const Scenario& scenario) {
  if (!scenario.faults) return;
  check_fault_targets(*scenario.faults, backend_.capabilities().ranks,
                      scenario.topology.gpu_count());
  set_snapshot_every(scenario.faults->snapshot.every, "faults.snapshot.every");
  if (scenario.faults->snapshot.every > 0) {
    set_recovery(scenario.faults->max_restarts.value_or(std::numeric_limits<int>::max()));
    set_shrink(planner_input_of(scenario));
  }
}

void JobRunner::set_snapshot_every(int every, const std::string& field) {
  if (every > 0 && !backend_.capabilities().snapshots_to_host)
    throw InputError(field + ": this backend cannot take in-memory snapshots (expected 0 here)");
  snapshot_every_ = std::max(0, every);
}

void JobRunner::schedule(std::int64_t before_iteration, Directive directive) {
  scheduled_.push_back({before_iteration, std::move(directive)});
}

void JobRunner::set_next_iteration(std::int64_t iteration) {
  next_ = iteration;
  resumed_at_ = iteration;
}

void JobRunner::set_recovery(int max_restarts) {
  max_restarts_ = max_restarts;
}

void JobRunner::set_shrink(PlannerInput base) {
  set_shrink(
      [base = std::move(base)](const ParallelPlan& current, const std::vector<int>& stranded) {
        return shrink_and_replan(base, current, stranded);
      });
}

void JobRunner::set_shrink(ShrinkChoice choose) {
  shrink_ = std::move(choose);
}

namespace {

// The index in `component` after `prefix` ("rank 3" after "rank "); none
// where it names something else.
std::optional<int> index_after(const std::string& component, const std::string& prefix) {
  if (component.rfind(prefix, 0) != 0) return std::nullopt;
  try {
    return std::stoi(component.substr(prefix.size()));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The ranks `failures` take out of the job: a killed rank, or the ranks on
// a failed or drained GPU (`failed_gpus` collects those GPUs, out of
// service, `drained` the ones only drained with a failed one's host, and
// `spares_lost` the ones no rank ran on); a failed link loses no rank but
// stops the job (`links` collects it: every rank restarts); none: a
// failure of another kind, which recovery does not handle.
std::optional<std::vector<LostRank>> lost_ranks(const std::vector<FailureSeen>& failures,
                                                const Capabilities& caps,
                                                std::vector<int>& failed_gpus,
                                                std::vector<int>& drained,
                                                std::vector<int>& spares_lost,
                                                std::vector<std::string>& links) {
  std::vector<LostRank> lost;
  // Each rank once (killed and on a failed GPU in one step: one loss).
  auto lose = [&](int rank, int gpu) {
    if (std::none_of(lost.begin(), lost.end(), [&](const LostRank& l) { return l.rank == rank; }))
      lost.push_back({rank, gpu});
  };
  for (const FailureSeen& f : failures) {
    const std::optional<int> rank = index_after(f.component, "rank ");
    const std::optional<int> gpu = index_after(f.component, "gpu ");
    if (f.kind == "fail" && f.component.rfind("link ", 0) == 0) {
      links.push_back(f.component);
    } else if (f.kind == "kill" && rank) {
      const auto r = static_cast<std::size_t>(*rank);
      lose(*rank, r < caps.gpu_of_rank.size() ? caps.gpu_of_rank[r] : *rank);
    } else if ((f.kind == "fail" || f.kind == "drain") && gpu) {
      failed_gpus.push_back(*gpu);
      if (f.kind == "drain") drained.push_back(*gpu);
      bool ran = false;
      for (std::size_t r = 0; r < caps.gpu_of_rank.size(); ++r)
        if (caps.gpu_of_rank[r] == *gpu) {
          lose(static_cast<int>(r), *gpu);
          ran = true;
        }
      if (!ran) spares_lost.push_back(*gpu);
    } else {
      return std::nullopt;
    }
  }
  return lost;
}

// "gpu 3", "gpus 0-7, 9": the GPUs in ascending runs; empty for none.
std::string gpu_ranges(std::vector<int> gpus) {
  std::sort(gpus.begin(), gpus.end());
  gpus.erase(std::unique(gpus.begin(), gpus.end()), gpus.end());
  std::string out;
  for (std::size_t k = 0; k < gpus.size();) {
    std::size_t end = k;
    while (end + 1 < gpus.size() && gpus[end + 1] == gpus[end] + 1) ++end;
    out += (out.empty() ? "" : ", ") + std::to_string(gpus[k]) +
           (end > k ? "-" + std::to_string(gpus[end]) : std::string());
    k = end + 1;
  }
  if (out.empty()) return out;
  return (gpus.size() > 1 ? "gpus " : "gpu ") + out;
}

// When the GPUs of `unplaced` ranks that failed are all back in service
// (Capabilities::back_at_ns: the last of them); none where the backend
// repairs nothing or one of them is not coming back.
std::optional<TimeNs> repaired_at(const Capabilities& caps, const std::vector<LostRank>& unplaced) {
  TimeNs last = 0;
  for (const LostRank& r : unplaced) {
    const auto g = static_cast<std::size_t>(r.gpu);
    if (g >= caps.back_at_ns.size()) return std::nullopt;
    const TimeNs at = caps.back_at_ns[g];
    if (at < 0) return std::nullopt;
    last = std::max(last, at);
  }
  return last;
}

}  // namespace

bool JobRunner::recover(const std::vector<FailureSeen>& failures) {
  if (max_restarts_ < 0) return false;
  const Capabilities caps = backend_.capabilities();
  std::vector<int> failed_gpus, drained, spares_lost;
  std::vector<std::string> links;
  const std::optional<std::vector<LostRank>> found =
      lost_ranks(failures, caps, failed_gpus, drained, spares_lost, links);
  if (!found) return false;
  std::vector<LostRank> lost = *found;
  // Ranks still on a GPU out of service (the job was waiting for its
  // repair when these failures came) are lost as well: they move to a
  // spare if one is free now, else the shrink accounts for them.
  std::vector<bool> is_lost(caps.gpu_of_rank.size(), false);
  for (const LostRank& l : lost)
    if (static_cast<std::size_t>(l.rank) < is_lost.size())
      is_lost[static_cast<std::size_t>(l.rank)] = true;
  for (std::size_t r = 0; r < caps.gpu_of_rank.size() && (!lost.empty() || !links.empty()); ++r) {
    const int gpu = caps.gpu_of_rank[r];
    const auto g = static_cast<std::size_t>(gpu);
    if (is_lost[r] || g >= caps.back_at_ns.size() || caps.back_at_ns[g] == 0) continue;
    lost.push_back({static_cast<int>(r), gpu});
    if (std::find(failed_gpus.begin(), failed_gpus.end(), gpu) == failed_gpus.end())
      failed_gpus.push_back(gpu);
  }
  auto is_drained = [&](int gpu) {
    return std::find(drained.begin(), drained.end(), gpu) != drained.end();
  };
  auto out_of_service = [&](int gpu) {
    return "gpu " + std::to_string(gpu) + (is_drained(gpu) ? " drained with its host" : " failed");
  };
  for (int gpu : spares_lost)
    notes_.push_back({next_, "recovery", out_of_service(gpu) + ": a spare, out of the pool"});
  // Only spares failed: nothing to restore, the iteration runs as it would have.
  if (lost.empty() && links.empty()) return true;
  if (restarts_ >= max_restarts_ || !last_snapshot_) return false;
  // The version restored: the newest whose every shard survived somewhere
  // (where the backend says what survived), else the newest taken.
  VersionChoice version{*last_snapshot_, false, {}, {}};
  if (caps.snapshot_holdings) {
    const std::optional<VersionChoice> chosen = choose_version(caps.snapshot_holdings());
    if (!chosen) {
      notes_.push_back(
          {next_, "recovery",
           "no snapshot version survived whole and no remote checkpoint: the run ends"});
      return false;
    }
    version = *chosen;
  }
  // Logged before the iteration that runs next: the snapshot's.
  const std::int64_t at = version.version;
  auto failed = [&](int gpu) {
    return std::find(failed_gpus.begin(), failed_gpus.end(), gpu) != failed_gpus.end();
  };
  auto cause = [&](const LostRank& r) {
    return failed(r.gpu) ? out_of_service(r.gpu) : "rank " + std::to_string(r.rank) + " killed";
  };
  std::vector<int> spares = caps.spare_gpus;
  const RemapResult remap = remap_to_spares(
      lost, spares, [&](int gpu) { return caps.place_of_gpu.at(static_cast<std::size_t>(gpu)); });
  std::vector<int> stranded;    // ranks whose GPU failed, with no spare left
  std::vector<int> failed_ids;  // their GPUs that failed themselves (not drained)
  int drained_stranded = 0;
  for (const LostRank& r : remap.unplaced) {
    if (!failed(r.gpu)) continue;
    stranded.push_back(r.rank);
    if (is_drained(r.gpu))
      ++drained_stranded;
    else
      failed_ids.push_back(r.gpu);
  }
  // The failed GPUs ("gpu 3 failed", "gpus 0-7, 9 failed"), and how many
  // were drained with their hosts.
  std::string why = gpu_ranges(failed_ids);
  if (!why.empty()) why += " failed";
  if (drained_stranded > 0) {
    std::set<int> hosts;  // of the drained GPUs stranded
    for (const LostRank& r : remap.unplaced)
      if (is_drained(r.gpu) && static_cast<std::size_t>(r.gpu) < caps.place_of_gpu.size())
        hosts.insert(caps.place_of_gpu[static_cast<std::size_t>(r.gpu)].host);
    why += (why.empty() ? "" : " and ") + std::to_string(drained_stranded) + " GPU" +
           (drained_stranded > 1 ? "s" : "") + " drained with " +
           (hosts.size() > 1 ? "their hosts" : "its host");
  }
  std::optional<ShrinkResult> shrunk;
  if (!stranded.empty()) {
    if (shrink_) shrunk = shrink_(plan(), stranded);
    if (!shrunk) {
      // Nothing to shrink to: the stranded ranks stay where they were and
      // the job waits for their GPUs' repair, where the backend repairs
      // them (the campaigns do the same).
      const std::optional<TimeNs> back = repaired_at(caps, remap.unplaced);
      if (!back) {
        notes_.push_back(
            {at, "recovery", why + "; no spare GPU and no smaller plan: the run ends"});
        return false;
      }
      TimeNs now = 0;
      for (const FailureSeen& f : failures) now = std::max(now, f.at_ns);
      char wait[64];
      std::snprintf(wait, sizeof wait, "%.0f s", ns_to_s(std::max<TimeNs>(0, *back - now)));
      notes_.push_back({at, "recovery",
                        why + "; no spare GPU and no smaller plan: waiting " + wait +
                            " for the repair (faults.repair)"});
    }
  }
  ++restarts_;
  for (const Placement& p : remap.placed)
    apply(at,
          {RemapDirective{p.rank, p.to_gpu},
           cause({p.rank, p.from_gpu}) + "; spare on " + to_string(p.nearness), 0},
          0, DirectiveSource::Recovery);
  for (const LostRank& r : remap.unplaced)
    if (!failed(r.gpu))
      notes_.push_back(
          {at, "recovery",
           cause(r) + "; no spare GPU: restarted on its own, gpu " + std::to_string(r.gpu)});
  shrunk_ = shrunk_ || shrunk.has_value();
  if (shrunk)
    apply(at,
          {ReplanDirective{shrunk->plan},
           why + "; no spare GPU: shrink to dp " + std::to_string(shrunk->plan.dp) +
               ", global batch " + std::to_string(shrunk->plan.global_batch),
           0},
          0, DirectiveSource::Recovery);
  if (version.lost) notes_.push_back({at, "recovery", describe_loss(version) + " (a state loss)"});
  const std::string which = version.from_remote                  ? "the remote checkpoint"
                            : version.version == *last_snapshot_ ? "the newest snapshot"
                                                                 : "the newest whole snapshot";
  apply(at,
        {RestoreDirective{version.version, version.from_remote},
         "restart " + std::to_string(restarts_) + " after " +
             (lost.empty() ? links.front() + " failed" : cause(lost.front())) + ": " + which,
         0},
        0, DirectiveSource::Recovery);
  // Newer versions belong to the timeline rolled back.
  last_snapshot_ = version.version;
  set_next_iteration(version.version);
  return true;
}

const ParallelPlan& JobRunner::plan() const {
  return controller_ ? controller_->job().plan : plan_;
}

void JobRunner::apply(std::int64_t iteration, const Directive& directive, double cost_s,
                      DirectiveSource source) {
  const bool decided = source == DirectiveSource::Decided;
  backend_.apply(directive);
  if (const auto* d = std::get_if<SnapshotDirective>(&directive.action))
    last_snapshot_ = d->version;
  // A scheduled re-plan changes the plan the next steps run as a decided one does.
  const bool replan = std::holds_alternative<ReplanDirective>(directive.action);
  if (controller_ && (decided || replan)) controller_->applied(directive);
  if (const auto* p = std::get_if<ReplanDirective>(&directive.action)) plan_ = p->plan;
  taken_.push_back({iteration, directive, cost_s, source});
}

bool JobRunner::step() {
  begin_iteration();
  return record(backend_.step(plan()));
}

void JobRunner::maybe_regrow(std::int64_t iteration) {
  if (!shrunk_ || plan().dp >= original_.dp) return;
  const Capabilities caps = backend_.capabilities();
  // Not while ranks wait for their GPUs' repair: the replicas kept are not whole.
  for (int gpu : caps.gpu_of_rank) {
    const auto g = static_cast<std::size_t>(gpu);
    if (g < caps.back_at_ns.size() && caps.back_at_ns[g] != 0) return;
  }
  const int free_gpus = static_cast<int>(caps.spare_gpus.size());
  const std::optional<ParallelPlan> grown = regrow_plan(plan(), original_, free_gpus);
  if (!grown) return;
  apply(iteration,
        {ReplanDirective{*grown},
         "regrow: " + std::to_string(free_gpus) + " GPUs free again: dp " +
             std::to_string(plan().dp) + " -> " + std::to_string(grown->dp) + ", global batch " +
             std::to_string(grown->global_batch),
         0},
        0, DirectiveSource::Recovery);
  shrunk_ = grown->dp < original_.dp;
}

void JobRunner::begin_iteration() {
  const std::int64_t i = next_;
  maybe_regrow(i);
  // A snapshot of the state the iteration starts from; none where a restore
  // just brought that very state back.
  if (snapshot_every_ > 0 && i > 0 && i % snapshot_every_ == 0 && resumed_at_ != i)
    apply(i, {SnapshotDirective{i}, "every " + std::to_string(snapshot_every_) + " iterations", 0},
          0, DirectiveSource::Scheduled);
  for (const auto& s : scheduled_)
    if (s.iteration == i) apply(i, s.directive, 0, DirectiveSource::Scheduled);
}

bool JobRunner::record(StepReport report) {
  if (!report.failures.empty()) {
    for (const auto& f : report.failures) failures_.push_back(f);
    return recover(report.failures);
  }
  ++completed_;
  ++next_;
  total_ns_ += report.iteration_ns;
  if (controller_) {
    const std::size_t known = stragglers_.size();
    const std::size_t logged = controller_->log().size();
    controller_->set_capabilities(backend_.capabilities());
    const auto started = std::chrono::steady_clock::now();
    const std::vector<Directive> decided = controller_->observe(report);
    controller_wall_ns_.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                      std::chrono::steady_clock::now() - started)
                                      .count());
    // The log's issued entries of this turn, in order, carry each one's cost.
    std::vector<double> costs;
    for (std::size_t k = logged; k < controller_->log().size(); ++k) {
      const Decision& d = controller_->log()[k];
      if (d.applied && d.directive) costs.push_back(d.cost_s);
      if (!d.directive && d.module != "straggler") notes_.push_back({next_, d.module, d.message});
    }
    for (std::size_t k = 0; k < decided.size(); ++k)
      apply(next_, decided[k], k < costs.size() ? costs[k] : 0.0, DirectiveSource::Decided);
    for (const auto& finding : controller_->stragglers()) {
      bool seen = false;
      for (std::size_t k = 0; k < known && !seen; ++k)
        seen = stragglers_[k].what.rfind(finding.subject() + " ", 0) == 0;
      if (!seen) stragglers_.push_back({next_, finding.describe()});
    }
  }
  last_ = std::move(report);
  return true;
}

}  // namespace parashift::core
