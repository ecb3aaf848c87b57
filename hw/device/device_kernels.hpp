// The narrow interface a device's compute sits behind: float buffers in the
// device's memory, a strided-batched GEMM, and the element-wise kernels of
// the synthetic layer (hw/model/pointwise.hpp) and optimizer
// (hw/model/optimizer.hpp). The device layer (device_layer.hpp) is written
// once against it; HostKernels (Eigen, always built) runs it on the CPU, so
// CI checks the layer's indexing, strides and operand order against
// hw/model/layer.cpp; CudaKernels (cuBLAS + CUDA kernels) runs it on a GPU.
// Calls are queued in order on the device (one stream); download() and
// synchronize() wait for them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "hw/model/synthetic_values.hpp"

namespace parashift::hw {

/// Row-major strided-batched GEMM: for i in [0, batch),
///   C_i = alpha op(A_i) op(B_i) + beta C_i,
/// op(A_i) is m x k, op(B_i) is k x n, C_i is m x n; element (r, c) of a
/// stored operand X_i is x[i * stride_x + r * ldx + c], where the stored A is
/// k x m when a_transposed (likewise B).
struct GemmCall {
  int m = 0, n = 0, k = 0;
  bool a_transposed = false, b_transposed = false;
  const float* a = nullptr;
  int lda = 0;
  std::int64_t stride_a = 0;
  const float* b = nullptr;
  int ldb = 0;
  std::int64_t stride_b = 0;
  float* c = nullptr;
  int ldc = 0;
  std::int64_t stride_c = 0;
  int batch = 1;
  float alpha = 1.0f, beta = 0.0f;
};

/// Adam's step constants (bias corrections folded in by the caller).
struct AdamStep {
  float learning_rate = 0, beta1 = 0, beta2 = 0, epsilon = 0;
  float correction1 = 1, correction2 = 1;  // 1 - beta^step
};

class DeviceKernels {
 public:
  virtual ~DeviceKernels() = default;
  virtual std::string name() const = 0;

  /// `elements` zeroed floats in device memory; release() frees them and
  /// never throws (DeviceBuffer's destructor calls it).
  virtual float* allocate(std::size_t elements) = 0;
  virtual void release(float* data) = 0;
  virtual void upload(std::span<const float> host, float* device) = 0;
  virtual void download(const float* device, std::span<float> host) = 0;
  virtual void copy(const float* from, float* to, std::size_t elements) = 0;
  virtual void fill_zero(float* data, std::size_t elements) = 0;
  /// The synthetic model's values where they live (hw/model/synthetic_values.hpp):
  /// the same bits as hw::fill_synthetic on the host.
  virtual void fill_synthetic(const SyntheticFill& fill, float* data) = 0;
  /// Waits until every queued call has finished.
  virtual void synchronize() = 0;

  virtual void gemm(const GemmCall& call) = 0;
  /// out = a + b, element-wise (out may alias a or b).
  virtual void add(const float* a, const float* b, float* out, std::size_t elements) = 0;
  /// act = gelu(u), tanh form.
  virtual void gelu(const float* u, float* act, std::size_t elements) = 0;
  /// du = dact .* gelu'(u).
  virtual void gelu_backward(const float* dact, const float* u, float* du,
                             std::size_t elements) = 0;
  /// In place on `blocks` contiguous seq x seq blocks of scores: causal
  /// softmax per row (row i over columns 0..i, zeros after).
  virtual void causal_softmax(float* scores, int blocks, int seq) = 0;
  /// ds = probs .* (dprobs - rowsum(probs .* dprobs)) x scale per block row
  /// (ds may alias dprobs).
  virtual void causal_softmax_backward(const float* probs, const float* dprobs, float* ds,
                                       int blocks, int seq, float scale) = 0;
  /// The squared-error loss of hw/model/synthetic_data.hpp: returns
  /// sum((y - target)^2) / denominator (summed in double) and writes
  /// dy = (y - target) x float(2 / denominator) (dy may alias y).
  virtual double squared_error(const float* y, const float* target, float* dy, std::size_t elements,
                               double denominator) = 0;
  /// w -= learning_rate x g.
  virtual void sgd_update(float* w, const float* g, std::size_t elements, float learning_rate) = 0;
  /// Adam with bias correction on (w, m, v) given g.
  virtual void adam_update(float* w, float* m, float* v, const float* g, std::size_t elements,
                           const AdamStep& step) = 0;
};

/// An owned buffer of a device's memory.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(DeviceKernels& kernels, std::size_t elements)
      : kernels_(&kernels), data_(kernels.allocate(elements)), size_(elements) {}
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept : kernels_(o.kernels_), data_(o.data_), size_(o.size_) {
    o.data_ = nullptr;
    o.size_ = 0;
  }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      kernels_ = o.kernels_;
      data_ = o.data_;
      size_ = o.size_;
      o.data_ = nullptr;
      o.size_ = 0;
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  float* data() { return data_; }
  const float* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  void reset() {
    if (data_ != nullptr) kernels_->release(data_);
    data_ = nullptr;
    size_ = 0;
  }
  DeviceKernels* kernels_ = nullptr;
  float* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace parashift::hw
