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

/// The learning rate when the user gives none. SGD: 1e-3. Adam: 1e-3 up to a
/// hidden size of 1,024 and 1e-3 x 1,024 / hidden above: Adam moves every
/// weight by about the rate whatever its gradient's scale, so a hidden
/// matrix's output moves by about rate x fan-in, and muP (Yang et al. 2022,
/// "Tensor Programs V") scales the rate of hidden matrices by 1/width to keep
/// that step the same at every width. Measured on the executor: Adam at 1e-3
/// diverges from hidden 2,048 (CPU) and at 5,120 (H200); the scaled rate
/// keeps the loss falling at 2,048 and 4,096 (docs/executor.md).
float default_learning_rate(OptimizerKind kind, int hidden);

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
