// The elastic supervisor's nodes and shrink (`run --elastic --shrink`): which
// nodes the job's ranks run on, and the plan that fits when a node is lost
// with no spare left.
#pragma once

#include <string>
#include <vector>

#include "core/parallel_plan.hpp"

namespace parashift::tools {

/// `--node-ids` as the ranks read it: one node number per `ranks_per_node`
/// ranks, e.g. "0,2,3" (distinct, >= 0). core::InputError naming the option
/// when the count is not ranks / ranks_per_node or an entry is no such number.
std::vector<int> parse_node_ids(const std::string& text, int ranks, int ranks_per_node);
std::string node_ids_text(const std::vector<int>& nodes);

/// `plan` on at most `ranks` ranks in whole nodes of `ranks_per_node`: the
/// same tp, pp and cp with the most data-parallel replicas that fit, the
/// global batch shrunk with them (the same micro-batches per replica), as
/// the simulator's shrink keeps each replica's work. dp = 0 when not even
/// one replica fits.
core::ParallelPlan shrink_to_fit(const core::ParallelPlan& plan, int ranks, int ranks_per_node);

}  // namespace parashift::tools
