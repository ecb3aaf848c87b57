#include "core/snapshot/rank_state.hpp"

#include "core/cost/memory.hpp"

namespace parashift::core {

const char* to_string(ShardKind kind) {
  switch (kind) {
    case ShardKind::Parameters:
      return "parameters";
    case ShardKind::Gradients:
      return "gradients";
    case ShardKind::Optimizer:
      return "optimizer";
  }
  return "?";
}

double RankState::bytes(ShardKind kind) const {
  switch (kind) {
    case ShardKind::Parameters:
      return parameters_bytes;
    case ShardKind::Gradients:
      return gradients_bytes;
    case ShardKind::Optimizer:
      return optimizer_bytes;
  }
  return 0;
}

RankState rank_state(const ModelSpec& model, const ParallelPlan& plan, int seq_len) {
  const MemoryEstimate m = peak_memory(model, plan, seq_len);
  return RankState{m.weights_bytes, m.gradients_bytes, m.optimizer_bytes};
}

double checkpoint_bytes(const RankState& state, const ParallelPlan& plan) {
  const double ranks = plan.gpus();
  const double model_parallel = ranks / plan.dp;
  return state.parameters_bytes * model_parallel + state.optimizer_bytes * ranks;
}

}  // namespace parashift::core
