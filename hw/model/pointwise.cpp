#include "hw/model/pointwise.hpp"

#include <cmath>

namespace parashift::hw {

namespace {

constexpr float kGeluC = 0.7978845608f;  // sqrt(2 / pi)
constexpr float kGeluA = 0.044715f;
using Flat = Eigen::Map<const Eigen::ArrayXf>;
using FlatOut = Eigen::Map<Eigen::ArrayXf>;

// tanh(sqrt(2/pi) (u + 0.044715 u^3)), the term GELU and its gradient share.
Eigen::ArrayXf gelu_tanh(const Flat& x) {
  return (kGeluC * (x + kGeluA * x.cube())).tanh();
}

Eigen::Index flat(std::size_t n) {
  return static_cast<Eigen::Index>(n);
}

}  // namespace

// The tanh GELU over whole arrays with Eigen's vectorised tanh (a clamped
// rational approximation), as fused GELU kernels do. Its cost per element does
// not depend on the values, unlike scalar std::tanh, whose slow paths made the
// executor's GELU take twice the time calibrated on small inputs.
void gelu(const float* u, float* act, std::size_t n) {
  const Flat x(u, flat(n));
  const Eigen::ArrayXf t = gelu_tanh(x);
  FlatOut(act, flat(n)) = 0.5f * x * (1.0f + t);
}

void gelu_backward(const float* dact, const float* u, float* du, std::size_t n) {
  const Flat x(u, flat(n));
  const Eigen::ArrayXf t = gelu_tanh(x);
  const auto grad = 0.5f * (1.0f + t) +
                    0.5f * x * (1.0f - t.square()) * kGeluC * (1.0f + 3.0f * kGeluA * x.square());
  FlatOut(du, flat(n)) = Flat(dact, flat(n)) * grad;
}

Matrix gelu(const Matrix& u) {
  Matrix act(u.rows(), u.cols());
  gelu(u.data(), act.data(), static_cast<std::size_t>(u.size()));
  return act;
}

Matrix gelu_backward(const Matrix& dact, const Matrix& u) {
  Matrix du(u.rows(), u.cols());
  gelu_backward(dact.data(), u.data(), du.data(), static_cast<std::size_t>(u.size()));
  return du;
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
