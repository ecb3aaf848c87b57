// The CUDA flavour's element-wise kernels: the same formulas as the CPU
// flavour (hw/model/pointwise.cpp, optimizer.cpp, synthetic_data.cpp), one
// thread per element with grid-stride loops, and one block per score row
// for the causal softmax and its backward (block reductions by warp shuffle).
#include <cmath>
#include <string>

#include "hw/cuda/kernel_launch.hpp"
#include "hw/hw_error.hpp"

namespace parashift::hw::cuda_launch {

namespace {

constexpr int kThreads = 256;
constexpr float kGeluC = 0.7978845608f;  // sqrt(2 / pi), as pointwise.cpp
constexpr float kGeluA = 0.044715f;

void check_launch(const char* kernel) {
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess)
    throw HwError(std::string("launching ") + kernel + ": " + cudaGetErrorString(status));
}

unsigned grid_for(std::size_t n) {
  const std::size_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 65535 * 16 ? (blocks > 0 ? blocks : 1) : 65535 * 16);
}

__global__ void add_kernel(const float* a, const float* b, float* out, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    out[i] = a[i] + b[i];
}

// synthetic_values.cpp's splitmix64 chain and 24-bit uniform, bit for bit.
__device__ std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

__global__ void fill_synthetic_kernel(float* out, int rows, int cols, std::uint64_t seed,
                                      std::uint64_t what, std::uint64_t row_offset,
                                      std::uint64_t col_block, std::uint64_t col_block_stride,
                                      std::uint64_t col_offset, float scale) {
  const std::size_t n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
  const std::uint64_t head = splitmix64(splitmix64(seed) ^ what);
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const std::uint64_t r = i / static_cast<std::size_t>(cols);
    const std::uint64_t c = i % static_cast<std::size_t>(cols);
    const std::uint64_t column = (c / col_block) * col_block_stride + col_offset + c % col_block;
    std::uint64_t h = splitmix64(head ^ (row_offset + r));
    h = splitmix64(h ^ column);
    h = splitmix64(h ^ 0);
    const float unit = static_cast<float>(h >> 40) / 16777216.0f;
    out[i] = scale * __fsub_rn(__fmul_rn(2.0f, unit), 1.0f);  // no contraction: the host's bits
  }
}

__device__ float gelu_tanh(float x) {
  return tanhf(kGeluC * (x + kGeluA * x * x * x));
}

__global__ void gelu_kernel(const float* u, float* act, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const float x = u[i];
    act[i] = 0.5f * x * (1.0f + gelu_tanh(x));
  }
}

__global__ void gelu_backward_kernel(const float* dact, const float* u, float* du, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const float x = u[i];
    const float t = gelu_tanh(x);
    const float grad =
        0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * kGeluC * (1.0f + 3.0f * kGeluA * x * x);
    du[i] = dact[i] * grad;
  }
}

// The block's maximum or sum of `v`; every thread gets it. `shared` holds
// one float per warp; callers may call it again right after.
template <bool kMax>
__device__ float block_reduce(float v, float* shared) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int offset = 16; offset > 0; offset /= 2) {
    const float other = __shfl_xor_sync(0xffffffffu, v, offset);
    v = kMax ? fmaxf(v, other) : v + other;
  }
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  if (warp == 0) {
    const int warps = blockDim.x / 32;
    v = lane < warps ? shared[lane] : (kMax ? -INFINITY : 0.0f);
    for (int offset = 16; offset > 0; offset /= 2) {
      const float other = __shfl_xor_sync(0xffffffffu, v, offset);
      v = kMax ? fmaxf(v, other) : v + other;
    }
    if (lane == 0) shared[0] = v;
  }
  __syncthreads();
  v = shared[0];
  __syncthreads();  // every thread has read shared[0] before the next call writes it
  return v;
}

// One block per row of `blocks` x seq rows; row i of its seq x seq block
// keeps columns 0..i (causal), softmax over them, zeros after.
__global__ void causal_softmax_kernel(float* scores, int seq) {
  __shared__ float shared[32];
  const std::size_t row = blockIdx.x;
  const int i = static_cast<int>(row % static_cast<std::size_t>(seq));
  float* r = scores + row * static_cast<std::size_t>(seq);
  float top = -INFINITY;
  for (int j = threadIdx.x; j <= i; j += blockDim.x) top = fmaxf(top, r[j]);
  top = block_reduce<true>(top, shared);
  float sum = 0.0f;
  for (int j = threadIdx.x; j < seq; j += blockDim.x) {
    const float e = j <= i ? expf(r[j] - top) : 0.0f;
    r[j] = e;
    sum += e;
  }
  sum = block_reduce<false>(sum, shared);
  for (int j = threadIdx.x; j < seq; j += blockDim.x) r[j] /= sum;
}

// ds = p .* (dp - rowsum(p .* dp)) x scale, one block per row (ds may alias dp:
// each element is read before it is written, by the same thread).
__global__ void causal_softmax_backward_kernel(const float* probs, const float* dprobs, float* ds,
                                               int seq, float scale) {
  __shared__ float shared[32];
  const std::size_t at = blockIdx.x * static_cast<std::size_t>(seq);
  float dot = 0.0f;
  for (int j = threadIdx.x; j < seq; j += blockDim.x) dot += probs[at + j] * dprobs[at + j];
  dot = block_reduce<false>(dot, shared);
  for (int j = threadIdx.x; j < seq; j += blockDim.x)
    ds[at + j] = probs[at + j] * (dprobs[at + j] - dot) * scale;
}

__global__ void squared_error_kernel(const float* y, const float* target, float* dy, std::size_t n,
                                     float grad_scale, double* partials) {
  __shared__ double shared[kThreads];
  double part = 0.0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const float diff = y[i] - target[i];
    part += static_cast<double>(diff) * static_cast<double>(diff);
    dy[i] = diff * grad_scale;
  }
  shared[threadIdx.x] = part;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) shared[threadIdx.x] += shared[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) partials[blockIdx.x] = shared[0];
}

// One block of kLossPartials threads: the partials' sum, in a fixed tree.
__global__ void sum_partials_kernel(const double* partials, double* sum) {
  __shared__ double shared[kLossPartials];
  shared[threadIdx.x] = partials[threadIdx.x];
  __syncthreads();
  for (int half = kLossPartials / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) shared[threadIdx.x] += shared[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) *sum = shared[0];
}

__global__ void sgd_kernel(float* w, const float* g, std::size_t n, float lr) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    w[i] -= lr * g[i];
}

__global__ void adam_kernel(float* w, float* m, float* v, const float* g, std::size_t n, float lr,
                            float beta1, float beta2, float epsilon, float c1, float c2) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const float gi = g[i];
    const float mi = beta1 * m[i] + (1.0f - beta1) * gi;
    const float vi = beta2 * v[i] + (1.0f - beta2) * (gi * gi);
    m[i] = mi;
    v[i] = vi;
    w[i] -= lr * (mi / c1) / (sqrtf(vi / c2) + epsilon);
  }
}

unsigned rows_of(int blocks, int seq) {
  return static_cast<unsigned>(static_cast<long long>(blocks) * seq);
}

}  // namespace

void fill_synthetic(float* out, int rows, int cols, std::uint64_t seed, std::uint64_t what,
                    std::uint64_t row_offset, std::uint64_t col_block,
                    std::uint64_t col_block_stride, std::uint64_t col_offset, float scale,
                    cudaStream_t stream) {
  const std::size_t n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
  if (n == 0) return;  // an empty grid is a launch error
  fill_synthetic_kernel<<<grid_for(n), kThreads, 0, stream>>>(
      out, rows, cols, seed, what, row_offset, col_block, col_block_stride, col_offset, scale);
  check_launch("fill_synthetic");
}

void add(const float* a, const float* b, float* out, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;  // an empty grid is a launch error
  add_kernel<<<grid_for(n), kThreads, 0, stream>>>(a, b, out, n);
  check_launch("add");
}

void gelu(const float* u, float* act, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;  // an empty grid is a launch error
  gelu_kernel<<<grid_for(n), kThreads, 0, stream>>>(u, act, n);
  check_launch("gelu");
}

void gelu_backward(const float* dact, const float* u, float* du, std::size_t n,
                   cudaStream_t stream) {
  if (n == 0) return;  // an empty grid is a launch error
  gelu_backward_kernel<<<grid_for(n), kThreads, 0, stream>>>(dact, u, du, n);
  check_launch("gelu_backward");
}

void causal_softmax(float* scores, int blocks, int seq, cudaStream_t stream) {
  if (rows_of(blocks, seq) == 0) return;  // an empty grid is a launch error
  causal_softmax_kernel<<<rows_of(blocks, seq), kThreads, 0, stream>>>(scores, seq);
  check_launch("causal_softmax");
}

void causal_softmax_backward(const float* probs, const float* dprobs, float* ds, int blocks,
                             int seq, float scale, cudaStream_t stream) {
  if (rows_of(blocks, seq) == 0) return;  // an empty grid is a launch error
  causal_softmax_backward_kernel<<<rows_of(blocks, seq), kThreads, 0, stream>>>(probs, dprobs, ds,
                                                                                seq, scale);
  check_launch("causal_softmax_backward");
}

void squared_error(const float* y, const float* target, float* dy, std::size_t n, float grad_scale,
                   double* scratch, cudaStream_t stream) {
  // Every block writes its partial (0 when it has no elements), so n = 0 is fine too.
  squared_error_kernel<<<kLossPartials, kThreads, 0, stream>>>(y, target, dy, n, grad_scale,
                                                               scratch + 1);
  check_launch("squared_error");
  sum_partials_kernel<<<1, kLossPartials, 0, stream>>>(scratch + 1, scratch);
  check_launch("squared_error (sum)");
}

void sgd_update(float* w, const float* g, std::size_t n, float learning_rate, cudaStream_t stream) {
  if (n == 0) return;  // an empty grid is a launch error
  sgd_kernel<<<grid_for(n), kThreads, 0, stream>>>(w, g, n, learning_rate);
  check_launch("sgd_update");
}

void adam_update(float* w, float* m, float* v, const float* g, std::size_t n, float learning_rate,
                 float beta1, float beta2, float epsilon, float correction1, float correction2,
                 cudaStream_t stream) {
  if (n == 0) return;  // an empty grid is a launch error
  adam_kernel<<<grid_for(n), kThreads, 0, stream>>>(w, m, v, g, n, learning_rate, beta1, beta2,
                                                    epsilon, correction1, correction2);
  check_launch("adam_update");
}

}  // namespace parashift::hw::cuda_launch
