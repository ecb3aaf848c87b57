// Where a job's ranks run after a re-plan to another number of ranks (a
// shrink after a failure, a regrow after a repair), as the fault campaigns
// place them (sim/faults/snapshot_resize.cpp): the replicas that survive
// keep their GPUs, so their tensor-parallel groups stay on their hosts.
#pragma once

#include <vector>

#include "core/parallel_plan.hpp"

namespace parashift::sim {

/// The GPU of each rank of `next`, from `was` with rank r on
/// gpu_of_rank[r] and dead[g] for each failed GPU g. With the same tp, pp
/// and cp, the old replicas whose GPUs are all alive carry the new replicas
/// 0, 1, ... in order, each rank on the GPU of the old rank at its
/// coordinates; every other rank takes a live GPU no rank runs on, in GPU
/// order. Another shape is placed afresh: rank r on the r-th live GPU.
/// Empty when the live GPUs are too few.
std::vector<int> resize_placement(const core::ParallelPlan& was,
                                  const std::vector<int>& gpu_of_rank,
                                  const core::ParallelPlan& next, const std::vector<bool>& dead);

}  // namespace parashift::sim
