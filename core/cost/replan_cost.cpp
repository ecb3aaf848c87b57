#include "core/cost/replan_cost.hpp"

#include "core/snapshot/rank_state.hpp"

namespace parashift::core {

bool replan_reshards(const ParallelPlan& from, const ParallelPlan& to) {
  return from.tp != to.tp || from.pp != to.pp || from.dp != to.dp || from.cp != to.cp ||
         from.virtual_stages != to.virtual_stages ||
         from.optimizer_sharding != to.optimizer_sharding;
}

double replan_state_bytes(const ModelSpec& model, const ParallelPlan& plan, int seq_len) {
  const RankState state = rank_state(model, plan, seq_len);
  return state.parameters_bytes + state.optimizer_bytes;
}

}  // namespace parashift::core
