// The plan's communication groups, split from the job's communicator in
// Megatron's rank order (core/rank_layout.hpp: tp fastest, then cp, dp, pp).
// Each group's rank is the member's coordinate along that dimension.
#pragma once

#include <memory>

#include "core/parallel_plan.hpp"
#include "core/rank_layout.hpp"
#include "hw/comm/communicator.hpp"

namespace parashift::hw {

struct CommGroups {
  core::RankCoord coord;
  std::unique_ptr<Communicator> tp;  // same stage and replica
  std::unique_ptr<Communicator> pp;  // same tp rank and replica: rank = stage
  std::unique_ptr<Communicator> dp;  // same stage and tp rank: rank = replica
  /// The dp group's members in another ring order (a ReorderDirective:
  /// rank = position in the order), which the replicated optimizer's
  /// gradient all-reduce runs around; null: dp's order.
  std::unique_ptr<Communicator> dp_ring;
  Communicator& sync_ring() const { return dp_ring ? *dp_ring : *dp; }
};

/// The colour of the dp group of `coord` (make_comm_groups' split).
int dp_color(const core::ParallelPlan& plan, const core::RankCoord& coord);

/// Collective over `world`: every rank must call it with the same plan.
CommGroups make_comm_groups(Communicator& world, const core::ParallelPlan& plan);

}  // namespace parashift::hw
