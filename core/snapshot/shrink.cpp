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
  in.reference.reset();
  PlannerOptions options;
  options.top_k = 1;
  const PlanSearch search = search_plans(in, options);
  if (search.top.empty()) return std::nullopt;
  ShrinkResult r;
  r.plan = search.top.front().plan;
  r.dropped_dp.assign(dropped.begin(), dropped.end());
  r.gpus = in.cluster.gpus;
  r.batch_share = static_cast<double>(in.global_batch) / current.global_batch;
  return r;
}

}  // namespace parashift::core
