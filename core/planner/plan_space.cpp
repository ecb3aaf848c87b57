#include "core/planner/plan_space.hpp"

#include <algorithm>

#include "core/cost/estimate.hpp"

namespace parashift::core {

namespace {

// problems()' tensor-parallel rules.
bool tp_divides_model(const ModelSpec& model, int tp) {
  return model.heads % tp == 0 && model.ffn_hidden % tp == 0 &&
         (model.kv_heads % tp == 0 || tp % model.kv_heads == 0);
}

// problems()' context-parallel rule.
bool cp_divides_sequence(int seq_len, int cp) {
  return cp == 1 || seq_len % (2 * cp) == 0;
}

template <typename T>
std::vector<T> pinned_or(const std::optional<T>& pin, std::vector<T> all) {
  if (pin) return {*pin};
  return all;
}

}  // namespace

PlanSpace::PlanSpace(const ModelSpec& model, const PlanSpaceInput& input)
    : layers_(model.layers), in_(input) {
  const PlanPins& pins = in_.pins;
  if (in_.gpus < 1 || in_.global_batch < 1 || in_.seq_len < 1 || model.heads < 1 ||
      model.kv_heads < 1 || model.layers < 1) {
    return;  // an empty space: nothing can run
  }

  if (pins.tp) {
    if (*pins.tp >= 1 && tp_divides_model(model, *pins.tp)) tp_.push_back(*pins.tp);
  } else {
    for (int tp = 1; tp <= std::min(in_.gpus_per_node, model.heads); ++tp) {
      if (tp_divides_model(model, tp)) tp_.push_back(tp);
    }
  }

  if (pins.cp) {
    if (*pins.cp >= 1 && cp_divides_sequence(in_.seq_len, *pins.cp)) cp_.push_back(*pins.cp);
  } else {
    for (int cp = 1; cp <= in_.max_cp; cp *= 2) {
      if (cp_divides_sequence(in_.seq_len, cp)) cp_.push_back(cp);
    }
  }

  if (pins.pp) {
    if (*pins.pp >= 1) pp_.push_back(*pins.pp);
  } else {
    for (int pp = 1; pp <= std::min(layers_, in_.gpus); ++pp) {
      if (in_.gpus % pp == 0) pp_.push_back(pp);
    }
  }

  if (pins.micro_batch) {
    if (*pins.micro_batch >= 1) micro_batch_.push_back(*pins.micro_batch);
  } else {
    for (int mb = 1; mb <= in_.global_batch; ++mb) {
      if (in_.global_batch % mb == 0) micro_batch_.push_back(mb);
    }
  }

  recompute_ = pinned_or(pins.recompute, {Recompute::None, Recompute::Selective, Recompute::Full});
  sequence_parallel_ = pinned_or(pins.sequence_parallel, {false, true});
  sharding_ =
      pinned_or(pins.optimizer_sharding,
                {OptimizerSharding::None, OptimizerSharding::Distributed, OptimizerSharding::Fsdp});

  std::vector<int> stages;
  if (pins.virtual_stages) {
    if (*pins.virtual_stages >= 1) stages.push_back(*pins.virtual_stages);
  } else {
    for (int v = 1; v <= layers_; ++v) {
      if (layers_ % v == 0) stages.push_back(v);
    }
  }
  const std::vector<Schedule> schedules = pinned_or(
      pins.schedule,
      {Schedule::GPipe, Schedule::OneFOneB, Schedule::ZeroBubbleH1, Schedule::Interleaved1F1B});
  for (const int v : stages) {
    for (const Schedule s : schedules) {
      // problems(): more than one chunk per rank needs the interleaved schedule.
      if (v > 1 && s != Schedule::Interleaved1F1B) continue;
      staging_.push_back({v, s});
    }
  }
}

bool PlanSpace::staging_ok(const ParallelPlan& plan, const Staging& staging) const {
  const PlanPins& pins = in_.pins;
  const int v = staging.virtual_stages;
  const bool interleaved = staging.schedule == Schedule::Interleaved1F1B;
  if (plan.pp * v > layers_) return false;  // problems(): pp*v <= layers
  if (interleaved && plan.pp > 1 && plan.micro_batches() % plan.pp != 0) return false;
  if (!pins.virtual_stages) {
    if (v > 1 && (plan.pp == 1 || layers_ % (plan.pp * v) != 0)) return false;
  }
  if (!pins.schedule) {
    if (plan.pp == 1 && staging.schedule != Schedule::OneFOneB) return false;
    if (interleaved && v == 1) return false;
  }
  return true;
}

bool PlanSpace::sharding_ok(const ParallelPlan& plan, OptimizerSharding sharding) const {
  return in_.pins.optimizer_sharding || plan.dp > 1 || sharding == OptimizerSharding::None;
}

int PlanSpace::node_shard(const ParallelPlan& plan) const {
  if (plan.optimizer_sharding != OptimizerSharding::Fsdp) return 0;
  const int dpn = group_placement(plan, in_.gpus_per_node).dp_per_node;
  return dpn > 1 && dpn < plan.dp && plan.dp % dpn == 0 ? dpn : 0;
}

std::int64_t PlanSpace::count() const {
  std::int64_t n = 0;
  for_each([&n](const ParallelPlan&) { ++n; });
  return n;
}

}  // namespace parashift::core
