#include "hw/model/pointwise.hpp"

#include <cmath>

namespace parashift::hw {

namespace {

constexpr float kGeluC = 0.7978845608f;  // sqrt(2 / pi)
constexpr float kGeluA = 0.044715f;

float gelu_at(float u) {
  return 0.5f * u * (1.0f + std::tanh(kGeluC * (u + kGeluA * u * u * u)));
}

float gelu_grad_at(float u) {
  const float t = std::tanh(kGeluC * (u + kGeluA * u * u * u));
  return 0.5f * (1.0f + t) + 0.5f * u * (1.0f - t * t) * kGeluC * (1.0f + 3.0f * kGeluA * u * u);
}

}  // namespace

Matrix gelu(const Matrix& u) {
  return u.unaryExpr([](float x) { return gelu_at(x); });
}

Matrix gelu_backward(const Matrix& dact, const Matrix& u) {
  return dact.cwiseProduct(u.unaryExpr([](float x) { return gelu_grad_at(x); }));
}

void causal_softmax(Eigen::Ref<Matrix> p) {
  const auto seq = p.rows();
  for (Eigen::Index i = 0; i < seq; ++i) {
    auto row = p.row(i);
    const float top = row.head(i + 1).maxCoeff();
    row.head(i + 1) = (row.head(i + 1).array() - top).exp();
    row.tail(seq - i - 1).setZero();  // causal: token i sees tokens 0..i
    row /= row.sum();
  }
}

Matrix causal_softmax_backward(const Eigen::Ref<const Matrix>& p,
                               const Eigen::Ref<const Matrix>& dp, float scale) {
  const Eigen::VectorXf dot = p.cwiseProduct(dp).rowwise().sum();
  return (p.array() * (dp.colwise() - dot).array()).matrix() * scale;
}

}  // namespace parashift::hw
