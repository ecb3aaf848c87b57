// The synthetic training data: a fixed set of samples (the same every
// iteration), each an already-embedded sequence x0 (seq x hidden, uniform in
// [-1, 1)) with a fixed target of the same shape (uniform in [-0.5, 0.5)).
// Loss of an iteration = mean over its micro-batches of the mean squared
// difference between the last layer's output and the target.
#pragma once

#include <cstdint>

#include "hw/model/layer.hpp"

namespace parashift::hw {

/// Input of global micro-batch `micro_batch` (sequences of shape.sequences each).
Matrix micro_batch_input(const LayerShape& shape, std::uint64_t seed, int micro_batch);
Matrix micro_batch_target(const LayerShape& shape, std::uint64_t seed, int micro_batch);

/// sum((y - t)^2) / (y.size() * micro_batches), and its gradient with respect to y.
struct LossTerm {
  double loss = 0;
  Matrix dy;
};
LossTerm squared_error_loss(const Matrix& y, const Matrix& target, int micro_batches);

}  // namespace parashift::hw
