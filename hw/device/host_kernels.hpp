// DeviceKernels on the CPU: host memory, Eigen GEMMs on strided maps, and the
// executor's own element-wise kernels (hw/model/pointwise.hpp). The reference
// the CUDA kernels are checked against, and what runs the device layer in CI.
#pragma once

#include <map>
#include <memory>

#include "hw/device/device_kernels.hpp"

namespace parashift::hw {

class HostKernels final : public DeviceKernels {
 public:
  std::string name() const override { return "host-eigen-fp32"; }
  float* allocate(std::size_t elements) override;
  void release(float* data) override;
  void upload(std::span<const float> host, float* device) override;
  void download(const float* device, std::span<float> host) override;
  void copy(const float* from, float* to, std::size_t elements) override;
  void fill_zero(float* data, std::size_t elements) override;
  void fill_synthetic(const SyntheticFill& fill, float* data) override;
  void synchronize() override {}

  void gemm(const GemmCall& call) override;
  void add(const float* a, const float* b, float* out, std::size_t elements) override;
  void gelu(const float* u, float* act, std::size_t elements) override;
  void gelu_backward(const float* dact, const float* u, float* du, std::size_t elements) override;
  void causal_softmax(float* scores, int blocks, int seq) override;
  void causal_softmax_backward(const float* probs, const float* dprobs, float* ds, int blocks,
                               int seq, float scale) override;
  double squared_error(const float* y, const float* target, float* dy, std::size_t elements,
                       double denominator) override;
  void sgd_update(float* w, const float* g, std::size_t elements, float learning_rate) override;
  void adam_update(float* w, float* m, float* v, const float* g, std::size_t elements,
                   const AdamStep& step) override;

  /// Buffers allocated and not yet released.
  std::size_t live_buffers() const { return buffers_.size(); }

 private:
  std::map<const float*, std::unique_ptr<float[]>> buffers_;
};

}  // namespace parashift::hw
