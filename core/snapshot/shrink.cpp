#include "core/snapshot/shrink.hpp"

#include <set>

#include "core/rank_layout.hpp"

namespace parashift::core {

std::optional<ShrinkResult> shrink_and_replan(const PlannerInput& base, const ParallelPlan& current,
                                              const std::vector<int>& unplaced_ranks) {
  const RankLayout layout(current);
  std::set<int> dropped;
  for (int rank : unplaced_ranks) dropped.insert(layout.coord(rank).dp);
  const int dp = current.dp - static_cast<int>(dropped.size());
  if (dp < 1) return std::nullopt;
  const int per_replica_batch = current.global_batch / current.dp;
  PlannerInput in = base;
  in.global_batch = dp * per_replica_batch;
  in.cluster.gpus = dp * current.tp * current.pp * current.cp;
  in.order = current.order;
  in.pins = PlanPins{};
  in.pins.tp = current.tp;
  in.pins.pp = current.pp;
  in.pins.cp = current.cp;
  in.pins.dp = dp;
  // The running plan's shape on the replicas left is a candidate too: the
  // search space misses some plans (layers that do not split evenly over
  // pp x virtual stages), and keeping the shape needs no new recipe.
  ParallelPlan same_shape = current;
  same_shape.dp = dp;
  same_shape.global_batch = in.global_batch;
  in.reference = same_shape;
  PlannerOptions options;
  options.top_k = 1;
  const PlanSearch search = search_plans(in, options);
  const ReferenceStanding* kept = search.reference ? &*search.reference : nullptr;
  const bool keep = kept && kept->valid && kept->fits_memory &&
                    (search.top.empty() ||
                     kept->ranked.estimate.total_ns <= search.top.front().estimate.total_ns);
  if (search.top.empty() && !keep) return std::nullopt;
  ShrinkResult r;
  r.plan = keep ? kept->ranked.plan : search.top.front().plan;
  r.dropped_dp.assign(dropped.begin(), dropped.end());
  r.gpus = in.cluster.gpus;
  r.batch_share = static_cast<double>(in.global_batch) / current.global_batch;
  return r;
}

std::optional<ParallelPlan> regrow_plan(const ParallelPlan& current, const ParallelPlan& original,
                                        int free_gpus) {
  const int missing = original.dp - current.dp;
  const int per_replica = current.tp * current.pp * current.cp;
  const int grow = std::min(missing, free_gpus / std::max(1, per_replica));
  if (grow < 1) return std::nullopt;
  if (grow == missing) return original;
  ParallelPlan p = current;
  p.dp = current.dp + grow;
  p.global_batch = current.global_batch / current.dp * p.dp;
  return p;
}

}  // namespace parashift::core
