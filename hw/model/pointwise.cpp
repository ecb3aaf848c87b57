#include "hw/model/pointwise.hpp"

#include <cmath>

namespace parashift::hw {

namespace {

constexpr float kGeluC = 0.7978845608f;  // sqrt(2 / pi)
constexpr float kGeluA = 0.044715f;
using RowArray = Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// tanh(sqrt(2/pi) (u + 0.044715 u^3)), the term GELU and its gradient share.
RowArray gelu_tanh(const Matrix& u) {
  const auto x = u.array();
  return (kGeluC * (x + kGeluA * x.cube())).tanh();
}

}  // namespace

// The tanh GELU over whole arrays with Eigen's vectorised tanh (a clamped
// rational approximation), as fused GELU kernels do. Its cost per element does
// not depend on the values, unlike scalar std::tanh, whose slow paths made the
// executor's GELU take twice the time calibrated on small inputs.
Matrix gelu(const Matrix& u) {
  const auto x = u.array();
  const RowArray t = gelu_tanh(u);
  return (0.5f * x * (1.0f + t)).matrix();
}

Matrix gelu_backward(const Matrix& dact, const Matrix& u) {
  const auto x = u.array();
  const RowArray t = gelu_tanh(u);
  const auto grad = 0.5f * (1.0f + t) +
                    0.5f * x * (1.0f - t.square()) * kGeluC * (1.0f + 3.0f * kGeluA * x.square());
  return (dact.array() * grad).matrix();
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
