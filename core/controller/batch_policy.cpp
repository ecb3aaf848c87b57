#include "core/controller/batch_policy.hpp"

#include <algorithm>
#include <cstdio>

#include "core/controller/cost_calibration.hpp"
#include "core/cost/estimate.hpp"
#include "core/cost/memory.hpp"

namespace parashift::core {

std::vector<BatchChoice> rank_batches(const JobModel& job, int min_batch, int max_batch,
                                      double noise_scale, const CostCalibration* calibration) {
  std::vector<BatchChoice> out;
  if (job.cost == nullptr) return out;
  const int step = job.plan.dp * job.plan.micro_batch;
  std::vector<int> multiples;
  for (int k = std::max(1, (min_batch + step - 1) / step); k * step <= max_batch;
       k = std::max(k + 1, k * 9 / 8))
    multiples.push_back(k);
  if (job.plan.global_batch % step == 0) multiples.push_back(job.plan.global_batch / step);
  std::sort(multiples.begin(), multiples.end());
  multiples.erase(std::unique(multiples.begin(), multiples.end()), multiples.end());
  const CostInputs& c = *job.cost;
  for (int k : multiples) {
    ParallelPlan p = job.plan;
    p.global_batch = k * step;
    if (!p.problems(c.model, c.seq_len, p.gpus()).empty()) continue;
    if (job.memory_limit_bytes > 0 &&
        peak_memory(c.model, p, c.seq_len).total_bytes() > job.memory_limit_bytes)
      continue;
    const TimeNs t = calibration != nullptr
                         ? calibration->predict_ns(p)
                         : c.estimate(p).total_ns;
    const double s = ns_to_s(t);
    out.push_back({p.global_batch, s, goodput(p.global_batch, noise_scale, s)});
  }
  std::stable_sort(out.begin(), out.end(), [](const BatchChoice& a, const BatchChoice& b) {
    return a.goodput > b.goodput;
  });
  return out;
}

void BatchPolicy::run(PolicyContext& context) {
  const JobModel& job = context.job;
  if (started_batch_ == 0) started_batch_ = job.plan.global_batch;
  if (context.report != nullptr && context.report->gradients) {
    const GradientNorms& g = *context.report->gradients;
    if (g.global_batch > g.replica_batch && g.replica_batch > 0)
      estimator_.add(g.replica_sq_norm, g.replica_batch, g.global_sq_norm, g.global_batch);
  }
  if (job.cost == nullptr || !context.capabilities.live_replan) return;
  if (estimator_.observations() < options_.every || context.iteration % options_.every != 0) return;
  const double noise = estimator_.noise_scale();
  if (!(noise > 0)) return;
  const int max_batch = options_.max_batch > 0 ? options_.max_batch : 8 * started_batch_;
  const auto ranked = rank_batches(job, options_.min_batch, max_batch, noise, context.calibration);
  if (ranked.empty()) return;
  const auto current = std::find_if(ranked.begin(), ranked.end(), [&](const BatchChoice& b) {
    return b.global_batch == job.plan.global_batch;
  });
  const BatchChoice& best = ranked.front();
  if (current == ranked.end() || best.goodput < current->goodput * (1 + options_.min_improvement)) {
    streak_ = 0;
    return;
  }
  streak_ = streak_batch_ == best.global_batch ? streak_ + 1 : 1;
  streak_batch_ = best.global_batch;
  if (streak_ < options_.patience) return;
  char message[256];
  std::snprintf(message, sizeof message,
                "global batch %d -> %d: noise scale %.0f sequences, goodput %+.1f%% (iteration "
                "%.3f s -> %.3f s)",
                job.plan.global_batch, best.global_batch, noise,
                100.0 * (best.goodput / current->goodput - 1), current->iteration_s,
                best.iteration_s);
  ParallelPlan plan = job.plan;
  plan.global_batch = best.global_batch;
  Directive d{ReplanDirective{plan}, std::string("batch: ") + message, 0};
  context.directives.push_back(d);
  context.log.push_back({context.iteration, "batch", message, d, true, 0, 0});
  streak_ = 0;
}

}  // namespace parashift::core
