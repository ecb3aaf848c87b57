#include "hw/model/optimizer.hpp"

#include <cmath>

#include "core/input_error.hpp"

namespace parashift::hw {

OptimizerKind parse_optimizer(const std::string& text) {
  if (text == "sgd") return OptimizerKind::Sgd;
  if (text == "adam") return OptimizerKind::Adam;
  throw core::InputError("optimizer: expected one of sgd, adam, found '" + text + "'");
}

const char* to_string(OptimizerKind kind) {
  return kind == OptimizerKind::Sgd ? "sgd" : "adam";
}

float default_learning_rate(OptimizerKind kind, int hidden) {
  constexpr float kRate = 1e-3f;
  constexpr int kBaseWidth = 1024;
  if (kind == OptimizerKind::Sgd || hidden <= kBaseWidth) return kRate;
  return kRate * static_cast<float>(kBaseWidth) / static_cast<float>(hidden);
}

OptimizerState zero_state(const OptimizerConfig& config, const LayerShape& shape) {
  OptimizerState s;
  if (config.kind == OptimizerKind::Adam) {
    s.m = zero_layer(shape);
    s.v = zero_layer(shape);
  }
  return s;
}

void optimizer_update(const OptimizerConfig& c, long long step, LayerTensors& weights,
                      const LayerTensors& grads, OptimizerState& state) {
  auto w = weights.all();
  const auto g = grads.all();
  if (c.kind == OptimizerKind::Sgd) {
    for (std::size_t i = 0; i < w.size(); ++i) *w[i] -= c.learning_rate * *g[i];
    return;
  }
  auto m = state.m.all();
  auto v = state.v.all();
  const float correct1 = 1.0f - std::pow(c.beta1, static_cast<float>(step));
  const float correct2 = 1.0f - std::pow(c.beta2, static_cast<float>(step));
  for (std::size_t i = 0; i < w.size(); ++i) {
    *m[i] = c.beta1 * *m[i] + (1.0f - c.beta1) * *g[i];
    *v[i] = c.beta2 * *v[i] + (1.0f - c.beta2) * g[i]->cwiseProduct(*g[i]);
    const auto m_hat = m[i]->array() / correct1;
    const auto v_hat = v[i]->array() / correct2;
    w[i]->array() -= c.learning_rate * m_hat / (v_hat.sqrt() + c.epsilon);
  }
}

}  // namespace parashift::hw
