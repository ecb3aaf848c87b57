#include "hw/cuda/cuda_kernels.hpp"

#include <algorithm>
#include <array>

#include "hw/cuda/cuda_check.hpp"
#include "hw/cuda/kernel_launch.hpp"

namespace parashift::hw {

struct CudaKernels::State {
  int device = 0;
  CudaMath math = CudaMath::Fp32;
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  double* loss_sum = nullptr;  // the squared-error kernel's scratch; the sum in [0]
  // Downloads (snapshots, layer moves, checks) go through two pinned host
  // buffers on a side stream, made on the first download.
  cudaStream_t copy_stream = nullptr;
  cudaEvent_t computed = nullptr;
  std::array<float*, 2> pinned{};
  std::array<cudaEvent_t, 2> landed{};

  State() = default;
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  // Frees whatever was made, also when the constructor stopped half-way.
  // Destructors do not throw: codes are ignored on the way out.
  ~State() {
    if (stream != nullptr) cudaStreamSynchronize(stream);
    if (copy_stream != nullptr) {
      cudaStreamSynchronize(copy_stream);
      cudaStreamDestroy(copy_stream);
    }
    for (std::size_t i = 0; i < 2; ++i) {
      if (pinned[i] != nullptr) cudaFreeHost(pinned[i]);
      if (landed[i] != nullptr) cudaEventDestroy(landed[i]);
    }
    if (computed != nullptr) cudaEventDestroy(computed);
    if (loss_sum != nullptr) cudaFree(loss_sum);
    if (blas != nullptr) cublasDestroy(blas);
    if (stream != nullptr) cudaStreamDestroy(stream);
  }
};

namespace {
constexpr std::size_t kPinnedFloats = std::size_t{16} << 20;  // 64 MiB per buffer
}  // namespace

CudaKernels::CudaKernels(int device, CudaMath math) : state_(std::make_unique<State>()) {
  state_->device = device;
  state_->math = math;
  CUDACHECK(cudaSetDevice(device));
  CUDACHECK(cudaStreamCreate(&state_->stream));
  CUBLASCHECK(cublasCreate(&state_->blas));
  CUBLASCHECK(cublasSetStream(state_->blas, state_->stream));
  CUBLASCHECK(cublasSetMathMode(
      state_->blas, math == CudaMath::Tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
  CUDACHECK(cudaMalloc(&state_->loss_sum, sizeof(double) * (cuda_launch::kLossPartials + 1)));
}

CudaKernels::~CudaKernels() = default;  // State's destructor frees what was made

std::string CudaKernels::name() const {
  cudaDeviceProp prop{};
  CUDACHECK(cudaGetDeviceProperties(&prop, state_->device));
  return std::string("cuda ") + prop.name + (state_->math == CudaMath::Tf32 ? " tf32" : " fp32");
}

float* CudaKernels::allocate(std::size_t elements) {
  void* data = nullptr;
  const std::size_t bytes = sizeof(float) * (elements > 0 ? elements : 1);
  CUDACHECK(cudaMalloc(&data, bytes));
  CUDACHECK(cudaMemsetAsync(data, 0, bytes, state_->stream));
  return static_cast<float*>(data);
}

// Called from DeviceBuffer's destructor, also while an HwError unwinds after
// a CUDA fault: it must not throw, so codes are ignored (the fault was reported).
void CudaKernels::release(float* data) {
  cudaStreamSynchronize(state_->stream);
  cudaFree(data);
}

// Pageable host memory: the call returns once the source has been staged,
// so the caller may free or reuse it.
void CudaKernels::upload(std::span<const float> host, float* device) {
  CUDACHECK(cudaMemcpyAsync(device, host.data(), host.size_bytes(), cudaMemcpyHostToDevice,
                            state_->stream));
}

// After the compute stream's queued work, in 64 MiB chunks on the side
// stream into the two pinned buffers in turn: chunk i + 1 crosses the bus
// while the host copies chunk i out of the other buffer.
void CudaKernels::download(const float* device, std::span<float> host) {
  State& st = *state_;
  if (st.copy_stream == nullptr) {  // set last, so a failed set-up is tried again
    if (st.computed == nullptr)
      CUDACHECK(cudaEventCreateWithFlags(&st.computed, cudaEventDisableTiming));
    for (std::size_t i = 0; i < 2; ++i) {
      if (st.pinned[i] == nullptr)
        CUDACHECK(
            cudaMallocHost(reinterpret_cast<void**>(&st.pinned[i]), kPinnedFloats * sizeof(float)));
      if (st.landed[i] == nullptr)
        CUDACHECK(cudaEventCreateWithFlags(&st.landed[i], cudaEventDisableTiming));
    }
    CUDACHECK(cudaStreamCreateWithFlags(&st.copy_stream, cudaStreamNonBlocking));
  }
  CUDACHECK(cudaEventRecord(st.computed, st.stream));
  CUDACHECK(cudaStreamWaitEvent(st.copy_stream, st.computed, 0));
  const std::size_t chunks = (host.size() + kPinnedFloats - 1) / kPinnedFloats;
  auto length = [&](std::size_t c) {
    return std::min(kPinnedFloats, host.size() - c * kPinnedFloats);
  };
  auto issue = [&](std::size_t c) {
    CUDACHECK(cudaMemcpyAsync(st.pinned[c % 2], device + c * kPinnedFloats,
                              length(c) * sizeof(float), cudaMemcpyDeviceToHost, st.copy_stream));
    CUDACHECK(cudaEventRecord(st.landed[c % 2], st.copy_stream));
  };
  if (chunks > 0) issue(0);
  for (std::size_t c = 0; c < chunks; ++c) {
    // Buffer (c + 1) % 2 last held chunk c - 1, which the host has copied out.
    if (c + 1 < chunks) issue(c + 1);
    CUDACHECK(cudaEventSynchronize(st.landed[c % 2]));
    std::copy_n(st.pinned[c % 2], length(c), host.data() + c * kPinnedFloats);
  }
}

void CudaKernels::copy(const float* from, float* to, std::size_t elements) {
  CUDACHECK(cudaMemcpyAsync(to, from, sizeof(float) * elements, cudaMemcpyDeviceToDevice,
                            state_->stream));
}

void CudaKernels::fill_zero(float* data, std::size_t elements) {
  CUDACHECK(cudaMemsetAsync(data, 0, sizeof(float) * elements, state_->stream));
}

void CudaKernels::fill_synthetic(const SyntheticFill& f, float* data) {
  cuda_launch::fill_synthetic(data, f.rows, f.cols, f.seed, f.what, f.row_offset, f.col_block,
                              f.col_block_stride, f.col_offset, f.scale, state_->stream);
}

void CudaKernels::synchronize() {
  CUDACHECK(cudaStreamSynchronize(state_->stream));
}

// Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: the
// operands swap places and keep their own transposition and leading dimension.
void CudaKernels::gemm(const GemmCall& c) {
  CUBLASCHECK(cublasSgemmStridedBatched(state_->blas, c.b_transposed ? CUBLAS_OP_T : CUBLAS_OP_N,
                                        c.a_transposed ? CUBLAS_OP_T : CUBLAS_OP_N, c.n, c.m, c.k,
                                        &c.alpha, c.b, c.ldb, static_cast<long long>(c.stride_b),
                                        c.a, c.lda, static_cast<long long>(c.stride_a), &c.beta,
                                        c.c, c.ldc, static_cast<long long>(c.stride_c), c.batch));
}

void CudaKernels::add(const float* a, const float* b, float* out, std::size_t n) {
  cuda_launch::add(a, b, out, n, state_->stream);
}

void CudaKernels::gelu(const float* u, float* act, std::size_t n) {
  cuda_launch::gelu(u, act, n, state_->stream);
}

void CudaKernels::gelu_backward(const float* dact, const float* u, float* du, std::size_t n) {
  cuda_launch::gelu_backward(dact, u, du, n, state_->stream);
}

void CudaKernels::causal_softmax(float* scores, int blocks, int seq) {
  cuda_launch::causal_softmax(scores, blocks, seq, state_->stream);
}

void CudaKernels::causal_softmax_backward(const float* probs, const float* dprobs, float* ds,
                                          int blocks, int seq, float scale) {
  cuda_launch::causal_softmax_backward(probs, dprobs, ds, blocks, seq, scale, state_->stream);
}

double CudaKernels::squared_error(const float* y, const float* target, float* dy, std::size_t n,
                                  double denominator) {
  cuda_launch::squared_error(y, target, dy, n, static_cast<float>(2.0 / denominator),
                             state_->loss_sum, state_->stream);
  double sum = 0;
  CUDACHECK(cudaMemcpyAsync(&sum, state_->loss_sum, sizeof(double), cudaMemcpyDeviceToHost,
                            state_->stream));
  CUDACHECK(cudaStreamSynchronize(state_->stream));
  return sum / denominator;
}

void CudaKernels::sgd_update(float* w, const float* g, std::size_t n, float learning_rate) {
  cuda_launch::sgd_update(w, g, n, learning_rate, state_->stream);
}

void CudaKernels::adam_update(float* w, float* m, float* v, const float* g, std::size_t n,
                              const AdamStep& s) {
  cuda_launch::adam_update(w, m, v, g, n, s.learning_rate, s.beta1, s.beta2, s.epsilon,
                           s.correction1, s.correction2, state_->stream);
}

}  // namespace parashift::hw
