// The optimizer step on real parameter buffers: plain SGD, or Adam with bias
// correction (Kingma & Ba 2015). Each rank updates only its own shards; the
// gradients are already summed over data-parallel replicas.
#pragma once

#include <string>

#include "hw/model/layer.hpp"

namespace parashift::hw {

enum class OptimizerKind { Sgd, Adam };
/// "sgd" or "adam"; throws core::InputError otherwise.
OptimizerKind parse_optimizer(const std::string& text);
const char* to_string(OptimizerKind kind);

struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::Adam;
  float learning_rate = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float epsilon = 1e-8f;
};

/// A layer's optimizer state: Adam's first and second moments (empty for SGD).
struct OptimizerState {
  LayerTensors m, v;
};

OptimizerState zero_state(const OptimizerConfig& config, const LayerShape& shape);

/// Applies step number `step` (1-based, for Adam's bias correction).
void optimizer_update(const OptimizerConfig& config, long long step, LayerTensors& weights,
                      const LayerTensors& grads, OptimizerState& state);

}  // namespace parashift::hw
