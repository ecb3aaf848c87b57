// DeviceKernels on one GPU: cudaMalloc'd buffers, one stream, cuBLAS
// strided-batched SGEMMs (FP32, or TF32 tensor cores when asked), and the
// element-wise kernels of kernel_launch.cu. Downloads (snapshot shards,
// layers moving between stages) go through pinned host memory on a side
// stream. The device layer (hw/device/) and the executor (HwBackend with
// HwOptions::kernels) run on it unchanged from their CPU runs. No CUDA type leaks
// out of this header; it exists only when PARASHIFT_HAVE_CUDA.
#pragma once

#include <memory>

#include "hw/device/device_kernels.hpp"

namespace parashift::hw {

/// FP32 computes GEMMs in full single precision (the CPU flavour's numbers,
/// for conformance); TF32 rounds GEMM inputs to TF32 on the tensor cores.
enum class CudaMath { Fp32, Tf32 };

class CudaKernels final : public DeviceKernels {
 public:
  CudaKernels(int device, CudaMath math);
  ~CudaKernels() override;
  CudaKernels(const CudaKernels&) = delete;
  CudaKernels& operator=(const CudaKernels&) = delete;

  std::string name() const override;
  float* allocate(std::size_t elements) override;
  void release(float* data) override;
  void upload(std::span<const float> host, float* device) override;
  void download(const float* device, std::span<float> host) override;
  void copy(const float* from, float* to, std::size_t elements) override;
  void fill_zero(float* data, std::size_t elements) override;
  void fill_synthetic(const SyntheticFill& fill, float* data) override;
  void synchronize() override;

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

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace parashift::hw
