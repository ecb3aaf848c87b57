// What one rank must snapshot: its parameter, gradient and optimizer shards
// under the plan's sharding (core/cost/memory.hpp; activations are not state).
#pragma once

#include <array>

#include "core/model_spec.hpp"
#include "core/parallel_plan.hpp"

namespace parashift::core {

enum class ShardKind { Parameters, Gradients, Optimizer };
constexpr std::array<ShardKind, 3> kShardKinds{ShardKind::Parameters, ShardKind::Gradients,
                                               ShardKind::Optimizer};
const char* to_string(ShardKind kind);

struct RankState {
  double parameters_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double bytes(ShardKind kind) const;
  double total_bytes() const { return parameters_bytes + gradients_bytes + optimizer_bytes; }
};

/// The most loaded rank's state (the first pipeline stage, with the
/// embedding), used for every rank: an upper bound on each rank's snapshot.
RankState rank_state(const ModelSpec& model, const ParallelPlan& plan, int seq_len);

/// Bytes a remote checkpoint of the whole job writes: parameters once per
/// model-parallel rank (data-parallel copies are identical) plus every
/// rank's optimizer shard; gradients are not saved.
double checkpoint_bytes(const RankState& state, const ParallelPlan& plan);

}  // namespace parashift::core
