#include "core/controller/replan_policy.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "core/controller/cost_calibration.hpp"
#include "core/controller/seconds_text.hpp"
#include "core/cost/estimate.hpp"
#include "core/planner/planner.hpp"

namespace parashift::core {
namespace {}  // namespace

ReplanCost predicted_replan_cost(const CostInputs& inputs, const ParallelPlan& from,
                                 const ParallelPlan& to, TimeNs rebuild_ns) {
  const ClusterView& c = inputs.cluster;
  return replan_cost(inputs.model, from, to, inputs.seq_len, rebuild_ns, [&](double bytes) {
    return transfer_ns(bytes, c.inter_node_Bps) + c.inter_node_latency_ns;
  });
}

double ReplanPolicy::rebuild_s() const {
  return switches_measured_ > 0 ? measured_rebuild_sum_s_ / switches_measured_ : options_.rebuild_s;
}

void ReplanPolicy::learn_switch(PolicyContext& context) {
  const JobModel& job = context.job;
  const std::optional<ParallelPlan> from = std::exchange(previous_plan_, job.plan);
  if (!from || context.report == nullptr || !replan_reshards(*from, job.plan)) return;
  TimeNs measured_ns = 0;
  for (const AppliedCost& a : context.report->applied)
    if (a.kind == "replan") measured_ns += a.ns;
  if (measured_ns <= 0) return;  // a backend that does not time its directives
  CostInputs calibrated = *job.cost;
  calibrated.device = context.calibration->device();
  calibrated.cluster = context.calibration->cluster();
  const double predicted_s = ns_to_s(
      predicted_replan_cost(calibrated, *from, job.plan, seconds_to_ns(rebuild_s())).total_ns());
  const double fetch_s = ns_to_s(predicted_replan_cost(calibrated, *from, job.plan, 0).total_ns());
  const double measured_s = ns_to_s(measured_ns);
  measured_rebuild_sum_s_ += std::max(0.0, measured_s - fetch_s);
  ++switches_measured_;
  char text[320];
  std::snprintf(text, sizeof text,
                "switch to %s measured %.3f s against %.3f s predicted: its fixed part "
                "(communicators, set-up) now expected at %.3f s (%d switch%s measured)",
                job.plan.label().c_str(), measured_s, predicted_s, rebuild_s(), switches_measured_,
                switches_measured_ == 1 ? "" : "es");
  context.log.push_back({context.iteration, "replan", text, std::nullopt, false, 0, 0});
}

void ReplanPolicy::run(PolicyContext& context) {
  const JobModel& job = context.job;
  const CostCalibration* calibration = context.calibration;
  if (job.cost == nullptr || calibration == nullptr || !context.capabilities.live_replan) return;
  learn_switch(context);
  if (context.iterations_since_change < options_.warmup) return;
  const TimeNs now_ns = calibration->predict_balanced_ns(job.plan);
  if (reference_label_ != job.plan.label()) {
    // Another module changed the plan (the batch, the sync mode): its
    // prediction moves with the change, not with the cluster.
    if (reference_ns_) reference_ns_ = chosen_ns_ = now_ns;
    reference_label_ = job.plan.label();
  }
  if (!reference_ns_) {
    reference_ns_ = job.cost->estimate(job.plan).total_ns;
    chosen_ns_ = *reference_ns_;
  }
  if (pending_) {
    // A background search: dropped if the plan changed, weighed once ready.
    if (pending_->plan_label != job.plan.label()) {
      pending_.reset();
    } else if (context.iteration < pending_->ready) {
      return;
    } else {
      const PlanSearch found = std::move(pending_->found);
      pending_.reset();
      return decide(context, found, now_ns, calibration->device(), calibration->cluster());
    }
  }
  const double moved =
      std::abs(static_cast<double>(now_ns - *reference_ns_)) / static_cast<double>(*reference_ns_);
  const bool stepped = calibration->changes() != changes_seen_;
  if (streak_ == 0 && !stepped && moved < options_.trigger) return;
  if (streak_ > 0 && context.iteration - last_search_ < options_.every) return;

  // The planner over the calibrated device and cluster.
  PlannerInput in;
  in.model = job.cost->model;
  in.device = calibration->device();
  in.cluster = calibration->cluster();
  in.global_batch = job.plan.global_batch;
  in.seq_len = job.cost->seq_len;
  in.precision = job.plan.precision;
  in.gpu_factors = calibration->slow_ranks();
  in.device_groups = calibration->device_groups();
  in.options = job.cost->options;
  in.work_model = job.cost->work_model;
  PlannerOptions options;
  options.top_k = 1;
  options.admit = context.capabilities.runs_plan;
  PlanSearch found = search_plans(in, options);
  last_search_ = context.iteration;
  reference_ns_ = now_ns;
  changes_seen_ = calibration->changes();
  const double search_s = static_cast<double>(found.stats.evaluated) * options_.plan_cost_us * 1e-6;
  const double iteration_s = ns_to_s(now_ns);
  if (search_s > options_.background_share * iteration_s) {
    const auto later = static_cast<std::int64_t>(std::ceil(search_s / iteration_s));
    char text[160];
    std::snprintf(text, sizeof text,
                  "search of %lld plans takes %.3f s (counted), over %.0f%% of an iteration: "
                  "in the background, weighed before iteration %lld",
                  static_cast<long long>(found.stats.evaluated), search_s,
                  100.0 * options_.background_share,
                  static_cast<long long>(context.iteration + later + 1));
    context.log.push_back({context.iteration, "replan", text, std::nullopt, false, 0, 0});
    pending_ = Pending{std::move(found), context.iteration + later, job.plan.label()};
    return;
  }
  decide(context, found, now_ns, in.device, in.cluster);
}

void ReplanPolicy::decide(PolicyContext& context, const PlanSearch& found, TimeNs now_ns,
                          const DeviceSpec& device, const ClusterView& cluster) {
  const JobModel& job = context.job;
  const CostCalibration* calibration = context.calibration;
  if (found.top.empty()) return;
  const RankedPlan& best = found.top.front();
  const std::string running = job.plan.label();
  const double now_s = ns_to_s(now_ns), best_s = ns_to_s(best.estimate.total_ns);
  const double drift = ns_to_s(now_ns - chosen_ns_) / ns_to_s(chosen_ns_);
  char drift_text[48];
  std::snprintf(drift_text, sizeof drift_text, "%+.1f%% since it was chosen", 100.0 * drift);
  const std::string message = best.label + " predicted " + seconds_text(best_s) +
                              " an iteration against " + seconds_text(now_s) + " (" + running +
                              ", " + drift_text + ")";
  auto reject = [&](const std::string& why, double gain_s, double cost_s) {
    // Logged once per plan and reason, not at every search that finds it again.
    if (rejected_ != best.label + why)
      context.log.push_back(
          {context.iteration, "replan", message + ": " + why, std::nullopt, false, gain_s, cost_s});
    rejected_ = best.label + why;
    streak_ = 0;
    streak_label_.clear();
  };
  if (best.label == running) {
    streak_ = 0;
    streak_label_.clear();
    return;
  }
  CostInputs calibrated = *job.cost;
  calibrated.device = device;
  calibrated.cluster = cluster;
  const ReplanCost cost =
      predicted_replan_cost(calibrated, job.plan, best.plan, seconds_to_ns(rebuild_s()));
  const double remaining =
      static_cast<double>(std::max<std::int64_t>(0, job.total_iterations - context.iteration - 1));
  const double gain_s = (now_s - best_s) * remaining;
  const double cost_s = ns_to_s(cost.total_ns());
  if (now_s - best_s < options_.min_improvement * now_s)
    return reject("saves under min_improvement", gain_s, cost_s);
  const double sd_s = calibration->difference_sd_ns(job.plan, best.plan) / 1e9;
  if (now_s - best_s < options_.sigmas * sd_s)
    return reject("saving within " + std::to_string(static_cast<int>(options_.sigmas)) +
                      " standard deviations of the calibration (" + seconds_text(sd_s) + ")",
                  gain_s, cost_s);
  if (gain_s - cost_s < options_.min_gain_s || gain_s < options_.gain_ratio * cost_s)
    return reject("gain over the remaining run does not pay the switch " +
                      std::to_string(static_cast<int>(options_.gain_ratio)) + " times",
                  gain_s, cost_s);
  streak_ = streak_label_ == best.label ? streak_ + 1 : 1;
  streak_label_ = best.label;
  if (streak_ < options_.patience) return;
  Directive d{ReplanDirective{best.plan},
              "replan: predicted " + seconds_text(best_s) + " an iteration against " +
                  seconds_text(now_s) + ", " + drift_text + ", switch " + seconds_text(cost_s),
              gain_s - cost_s};
  context.directives.push_back(d);
  context.log.push_back({context.iteration, "replan", message, d, true, gain_s, cost_s});
  reference_ns_ = best.estimate.total_ns;
  chosen_ns_ = best.estimate.total_ns;
  reference_label_ = best.label;
  streak_ = 0;
  streak_label_.clear();
}

}  // namespace parashift::core
