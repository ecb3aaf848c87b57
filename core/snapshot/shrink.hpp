// With no spare left: drop the data-parallel replicas that held a rank no
// spare could take, keep each remaining replica's share of the batch
// (global batch = new dp x old per-replica batch), and re-plan with the
// planner on the GPUs left, tensor/pipeline/context parallelism pinned so
// every surviving shard keeps its meaning. The running plan's shape with the
// smaller dp stays when the cost model rates it at least as fast as the
// search's best (the search does not enumerate every plan, e.g. uneven
// layer splits over virtual stages). Once GPUs are back, regrow_plan gives
// the replicas back (the fault campaigns and the one loop's recovery).
#pragma once

#include <optional>
#include <vector>

#include "core/parallel_plan.hpp"
#include "core/planner/planner.hpp"

namespace parashift::core {

struct ShrinkResult {
  ParallelPlan plan;            // the best plan on the GPUs left
  std::vector<int> dropped_dp;  // data-parallel indices given up, ascending
  int gpus = 0;                 // GPUs the new plan uses
  double batch_share = 1;       // new global batch / old: useful work per iteration
};

/// `base` describes the job as planned (model, device, cluster, options);
/// nullopt when every replica would be dropped or no plan fits.
std::optional<ShrinkResult> shrink_and_replan(const PlannerInput& base, const ParallelPlan& current,
                                              const std::vector<int>& unplaced_ranks);

/// Growing back after a shrink, once `free_gpus` GPUs are free (repaired,
/// or spares): as many of the replicas `original` had and `current` lacks
/// as fit (each tp x pp x cp GPUs), each replica's batch kept; all of them
/// back gives `original` itself. nullopt when none is missing or none fits.
std::optional<ParallelPlan> regrow_plan(const ParallelPlan& current, const ParallelPlan& original,
                                        int free_gpus);

}  // namespace parashift::core
