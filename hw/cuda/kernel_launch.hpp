// Launchers of the CUDA flavour's element-wise kernels (kernel_launch.cu),
// queued on `stream`; each checks its launch and throws HwError on failure.
// C++17 and free of the project's C++20 headers, so nvcc and the host
// compiler both read it. Include only from hw/cuda.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

namespace parashift::hw::cuda_launch {

void add(const float* a, const float* b, float* out, std::size_t n, cudaStream_t stream);
/// hw::fill_synthetic on the device (hw/model/synthetic_values.hpp, the same bits).
void fill_synthetic(float* out, int rows, int cols, std::uint64_t seed, std::uint64_t what,
                    std::uint64_t row_offset, std::uint64_t col_block,
                    std::uint64_t col_block_stride, std::uint64_t col_offset, float scale,
                    cudaStream_t stream);
void gelu(const float* u, float* act, std::size_t n, cudaStream_t stream);
void gelu_backward(const float* dact, const float* u, float* du, std::size_t n,
                   cudaStream_t stream);
void causal_softmax(float* scores, int blocks, int seq, cudaStream_t stream);
void causal_softmax_backward(const float* probs, const float* dprobs, float* ds, int blocks,
                             int seq, float scale, cudaStream_t stream);
/// Doubles of device scratch squared_error needs.
inline constexpr int kLossPartials = 256;
/// Writes dy = (y - t) x grad_scale and sum((y - t)^2) into scratch[0]
/// (scratch: kLossPartials + 1 device doubles). The sum is the same bits
/// every run: per-block partials in fixed places, then one block adds them
/// in a fixed order (no atomics).
void squared_error(const float* y, const float* target, float* dy, std::size_t n, float grad_scale,
                   double* scratch, cudaStream_t stream);
void sgd_update(float* w, const float* g, std::size_t n, float learning_rate, cudaStream_t stream);
void adam_update(float* w, float* m, float* v, const float* g, std::size_t n, float learning_rate,
                 float beta1, float beta2, float epsilon, float correction1, float correction2,
                 cudaStream_t stream);

}  // namespace parashift::hw::cuda_launch
