#include "hw/device/host_kernels.hpp"

#include <algorithm>

#include "hw/model/layer.hpp"
#include "hw/model/pointwise.hpp"

namespace parashift::hw {

namespace {

using Stride = Eigen::OuterStride<>;
using ConstMap = Eigen::Map<const Matrix, Eigen::Unaligned, Stride>;
using MutMap = Eigen::Map<Matrix, Eigen::Unaligned, Stride>;
using ConstArray = Eigen::Map<const Eigen::ArrayXf>;
using MutArray = Eigen::Map<Eigen::ArrayXf>;

Eigen::Index idx(std::size_t n) {
  return static_cast<Eigen::Index>(n);
}

// The stored operand: rows x cols as op() sees it, transposed back when stored so.
template <typename Product>
void gemm_one(const GemmCall& c, const float* a, const float* b, float* out, Product&& assign) {
  const Eigen::Index a_rows = c.a_transposed ? c.k : c.m, a_cols = c.a_transposed ? c.m : c.k;
  const Eigen::Index b_rows = c.b_transposed ? c.n : c.k, b_cols = c.b_transposed ? c.k : c.n;
  const ConstMap am(a, a_rows, a_cols, Stride(c.lda));
  const ConstMap bm(b, b_rows, b_cols, Stride(c.ldb));
  MutMap cm(out, c.m, c.n, Stride(c.ldc));
  if (c.a_transposed && c.b_transposed)
    assign(cm, am.transpose(), bm.transpose());
  else if (c.a_transposed)
    assign(cm, am.transpose(), bm);
  else if (c.b_transposed)
    assign(cm, am, bm.transpose());
  else
    assign(cm, am, bm);
}

}  // namespace

float* HostKernels::allocate(std::size_t elements) {
  auto owned = std::make_unique<float[]>(std::max<std::size_t>(elements, 1));  // zeroed
  float* data = owned.get();
  buffers_.emplace(data, std::move(owned));
  return data;
}

void HostKernels::release(float* data) {
  buffers_.erase(data);  // live_buffers() shows a leak or a double release in tests
}

void HostKernels::upload(std::span<const float> host, float* device) {
  std::copy(host.begin(), host.end(), device);
}

void HostKernels::download(const float* device, std::span<float> host) {
  std::copy(device, device + host.size(), host.begin());
}

void HostKernels::copy(const float* from, float* to, std::size_t elements) {
  std::copy(from, from + elements, to);
}

void HostKernels::fill_zero(float* data, std::size_t elements) {
  std::fill(data, data + elements, 0.0f);
}

void HostKernels::fill_synthetic(const SyntheticFill& fill, float* data) {
  hw::fill_synthetic(fill, data);
}

// The forms layer.cpp writes: `C = A B`, `C = (A B) x alpha`, `C += A B`.
void HostKernels::gemm(const GemmCall& c) {
  for (int i = 0; i < c.batch; ++i) {
    const float* a = c.a + i * c.stride_a;
    const float* b = c.b + i * c.stride_b;
    float* out = c.c + i * c.stride_c;
    gemm_one(c, a, b, out, [&](MutMap& cm, const auto& am, const auto& bm) {
      if (c.beta == 0.0f && c.alpha == 1.0f) {
        cm.noalias() = am * bm;
      } else if (c.beta == 0.0f) {
        cm.noalias() = (am * bm) * c.alpha;
      } else {
        if (c.beta != 1.0f) cm *= c.beta;
        if (c.alpha == 1.0f)
          cm.noalias() += am * bm;
        else
          cm.noalias() += (am * bm) * c.alpha;
      }
    });
  }
}

void HostKernels::add(const float* a, const float* b, float* out, std::size_t n) {
  MutArray(out, idx(n)) = ConstArray(a, idx(n)) + ConstArray(b, idx(n));
}

void HostKernels::gelu(const float* u, float* act, std::size_t n) {
  hw::gelu(u, act, n);
}

void HostKernels::gelu_backward(const float* dact, const float* u, float* du, std::size_t n) {
  hw::gelu_backward(dact, u, du, n);
}

void HostKernels::causal_softmax(float* scores, int blocks, int seq) {
  const std::size_t block = static_cast<std::size_t>(seq) * static_cast<std::size_t>(seq);
  for (int i = 0; i < blocks; ++i)
    hw::causal_softmax(Eigen::Map<Matrix>(scores + static_cast<std::size_t>(i) * block, seq, seq));
}

void HostKernels::causal_softmax_backward(const float* probs, const float* dprobs, float* ds,
                                          int blocks, int seq, float scale) {
  const std::size_t block = static_cast<std::size_t>(seq) * static_cast<std::size_t>(seq);
  for (int i = 0; i < blocks; ++i) {
    const std::size_t at = static_cast<std::size_t>(i) * block;
    const Matrix out =
        hw::causal_softmax_backward(Eigen::Map<const Matrix>(probs + at, seq, seq),
                                    Eigen::Map<const Matrix>(dprobs + at, seq, seq), scale);
    Eigen::Map<Matrix>(ds + at, seq, seq) = out;
  }
}

// synthetic_data.cpp's squared_error_loss on flat arrays.
double HostKernels::squared_error(const float* y, const float* target, float* dy, std::size_t n,
                                  double denominator) {
  const Eigen::ArrayXf diff = ConstArray(y, idx(n)) - ConstArray(target, idx(n));
  const double loss = diff.cast<double>().matrix().squaredNorm() / denominator;
  MutArray(dy, idx(n)) = diff * static_cast<float>(2.0 / denominator);
  return loss;
}

void HostKernels::sgd_update(float* w, const float* g, std::size_t n, float learning_rate) {
  MutArray(w, idx(n)) -= learning_rate * ConstArray(g, idx(n));
}

// optimizer.cpp's Adam, element by element in the same order of operations.
void HostKernels::adam_update(float* w, float* m, float* v, const float* g, std::size_t n,
                              const AdamStep& s) {
  MutArray wa(w, idx(n)), ma(m, idx(n)), va(v, idx(n));
  const ConstArray ga(g, idx(n));
  ma = s.beta1 * ma + (1.0f - s.beta1) * ga;
  va = s.beta2 * va + (1.0f - s.beta2) * ga.square();
  wa -= s.learning_rate * (ma / s.correction1) / ((va / s.correction2).sqrt() + s.epsilon);
}

}  // namespace parashift::hw
