#include "core/controller/sync_policy.hpp"

#include <algorithm>
#include <utility>

#include "core/controller/aggregation_policy.hpp"
#include "core/controller/cost_calibration.hpp"
#include "core/controller/seconds_text.hpp"
#include "core/cost/estimate.hpp"

namespace parashift::core {
namespace {

std::vector<std::pair<SyncMode, CompressionSpec>> candidates(const JobModel& job,
                                                             const SyncPolicyOptions& o) {
  const std::vector<CompressionSpec> compressors = sync_compressors(o);
  std::vector<SyncMode> modes{SyncMode::Flat};
  if (o.hierarchical) modes.push_back(SyncMode::Hierarchical);
  if (o.delayed) modes.push_back(SyncMode::Delayed);
  std::vector<std::pair<SyncMode, CompressionSpec>> out{{job.plan.sync, job.plan.compression}};
  for (SyncMode m : modes)
    for (const CompressionSpec& c : compressors) {
      if (m == job.plan.sync && c == job.plan.compression) continue;
      ParallelPlan p = job.plan;
      p.sync = m;
      p.compression = c;
      if (p.problems(job.cost->model, job.cost->seq_len, p.gpus()).empty()) out.push_back({m, c});
    }
  return out;
}

std::string percent(double share) {
  return std::to_string(static_cast<int>(share * 100 + 0.5)) + "%";
}

}  // namespace

std::vector<CompressionSpec> sync_compressors(const SyncPolicyOptions& o) {
  std::vector<CompressionSpec> compressors{CompressionSpec{}};
  if (o.int8) compressors.push_back(parse_compression("int8"));
  if (o.powersgd)
    for (const char* text : {"powersgd:4", "powersgd:16", "powersgd:64"})
      compressors.push_back(parse_compression(text));
  if (o.topk) compressors.push_back(parse_compression("topk:0.01"));
  return compressors;
}

SyncPolicyOptions sync_policy_options(const ModuleConfig& c) {
  SyncPolicyOptions o;
  o.min_improvement = c.knob("min_improvement");
  o.every = static_cast<int>(c.knob("every"));
  o.patience = static_cast<int>(c.knob("patience"));
  o.hierarchical = c.flag("hierarchical");
  o.delayed = c.flag("delayed");
  o.int8 = c.flag("int8");
  o.powersgd = c.flag("powersgd");
  o.topk = c.flag("topk");
  o.threshold = c.knob("threshold");
  o.max_left_out = c.knob("max_left_out");
  return o;
}

std::optional<double> SyncPolicy::too_lossy(const CompressionSpec& c) const {
  for (const CompressionFit& f : fits_)
    if (f.compressor == c && f.left_out > options_.max_left_out) return f.left_out;
  return std::nullopt;
}

std::string SyncChoice::label() const {
  return std::string(to_string(sync)) + " + " + to_string(compression);
}

std::vector<SyncChoice> rank_sync_choices(const JobModel& job, const SyncPolicyOptions& options,
                                          const CostCalibration* calibration,
                                          double inter_node_share) {
  std::vector<SyncChoice> out;
  if (job.cost == nullptr) return out;
  ClusterView cluster = job.cost->cluster;
  cluster.inter_node_Bps *= inter_node_share;
  for (const auto& [sync, compression] : candidates(job, options)) {
    ParallelPlan p = job.plan;
    p.sync = sync;
    p.compression = compression;
    const TimeNs t = calibration != nullptr ? calibration->predict_ns(p)
                                            : estimate_iteration(job.cost->model, job.cost->device,
                                                                 cluster, p, job.cost->seq_len)
                                                  .total_ns;
    out.push_back({sync, compression, t});
  }
  std::stable_sort(out.begin(), out.end(), [](const SyncChoice& a, const SyncChoice& b) {
    return a.iteration_ns < b.iteration_ns;
  });
  return out;
}

const SyncChoice& sync_pick(const std::vector<SyncChoice>& ranked, const SyncChoice& current,
                            double min_improvement) {
  const SyncChoice& best = ranked.front();
  const double now = static_cast<double>(current.iteration_ns);
  const double saved = now > 0 ? (now - static_cast<double>(best.iteration_ns)) / now : 0.0;
  return saved >= min_improvement ? best : current;
}

bool SyncPolicy::network_moved(const PolicyContext& context) {
  bool moved = false;
  if (context.calibration != nullptr &&
      std::exchange(calibration_changes_, context.calibration->changes()) !=
          context.calibration->changes())
    moved = true;
  const StepReport* report = context.report;
  if (report == nullptr || report->links.empty() || report->iteration_ns <= 0) return moved;
  LinkCongestion now = link_congestion(*report, options_.threshold);
  if (now.congested == congested_) return moved;
  congested_ = std::move(now.congested);
  ring_share_ =
      context.capabilities.ring_routes
          ? slowest_ring_share(context.job.plan, context.capabilities.ring_routes, now.shares)
          : 1;
  return true;
}

void SyncPolicy::run(PolicyContext& context) {
  const JobModel& job = context.job;
  if (job.cost == nullptr || job.plan.dp < 2 ||
      job.plan.optimizer_sharding != OptimizerSharding::None)
    return;
  if (context.report != nullptr && !context.report->compression_fits.empty())
    fits_ = context.report->compression_fits;
  if (network_moved(context)) burst_left_ = options_.every;
  const bool in_burst = burst_left_ > 0;
  if (in_burst) --burst_left_;
  if (!in_burst && context.iteration % options_.every != 0) return;
  // Priced, then the compressors measured to leave out too much dropped
  // (the running one stays, to be priced against).
  std::vector<SyncChoice> ranked;
  std::optional<SyncChoice> dropped;  // the fastest of them
  for (SyncChoice& c : rank_sync_choices(job, options_, context.calibration,
                                         context.calibration != nullptr ? 1 : ring_share_)) {
    const bool running = c.sync == job.plan.sync && c.compression == job.plan.compression;
    if (!running && too_lossy(c.compression)) {
      if (!dropped) dropped = c;
    } else {
      ranked.push_back(std::move(c));
    }
  }
  if (ranked.empty()) return;
  const auto current = std::find_if(ranked.begin(), ranked.end(), [&](const SyncChoice& c) {
    return c.sync == job.plan.sync && c.compression == job.plan.compression;
  });
  // The running compressor measured to leave out too much gives way to the
  // fastest that does not, whatever the time it saves.
  const std::optional<double> lossy = too_lossy(job.plan.compression);
  const SyncChoice& best =
      lossy && &ranked.front() == &*current && ranked.size() > 1 ? ranked[1] : ranked.front();
  const TimeNs now_ns = current->iteration_ns;
  const bool pays = &best != &*current &&
                    (lossy || &sync_pick(ranked, *current, options_.min_improvement) != &*current);
  const double remaining =
      static_cast<double>(std::max<std::int64_t>(0, job.total_iterations - context.iteration - 1));
  const double gain_s = ns_to_s(now_ns - best.iteration_ns) * remaining;
  std::string message = best.label() + " predicted " + seconds_text(ns_to_s(best.iteration_ns)) +
                        " an iteration against " + seconds_text(ns_to_s(now_ns)) + " (" +
                        current->label() + ")";
  if (lossy)
    message += "; " + std::string(to_string(job.plan.compression)) + " leaves out " +
               percent(*lossy) + " of the gradient (max_left_out " +
               percent(options_.max_left_out) + ")";
  if (dropped && dropped->iteration_ns < best.iteration_ns) {
    const std::string note =
        dropped->label() + " predicted " + seconds_text(ns_to_s(dropped->iteration_ns)) +
        " but leaves out " + percent(*too_lossy(dropped->compression)) +
        " of the gradient (max_left_out " + percent(options_.max_left_out) + "): not chosen";
    if (!(in_burst && note == last_dropped_))
      context.log.push_back({context.iteration, "sync", note, std::nullopt, false, 0, 0});
    last_dropped_ = note;
  }
  if (!pays) {
    // Inside a burst the same rejection is logged once.
    if (&best != &*current && !(in_burst && message == last_rejected_))
      context.log.push_back({context.iteration, "sync", message + ": saves under min_improvement",
                             std::nullopt, false, gain_s, 0});
    last_rejected_ = message;
    streak_label_.reset();
    streak_ = 0;
    return;
  }
  streak_ = streak_label_ == best.label() ? streak_ + 1 : 1;
  streak_label_ = best.label();
  if (streak_ < options_.patience) return;
  ParallelPlan plan = job.plan;
  plan.sync = best.sync;
  plan.compression = best.compression;
  Directive d{ReplanDirective{plan}, "sync: " + message, gain_s};
  context.directives.push_back(d);
  context.log.push_back({context.iteration, "sync", message, d, true, gain_s, 0});
  streak_label_.reset();
  streak_ = 0;
}

}  // namespace parashift::core
