#include "hw/cuda/cuda_device.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <cuda_bf16.h>

#include "hw/cuda/cuda_check.hpp"

namespace parashift::hw {

struct CudaDevice::State {
  int device = 0;
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  void* operands = nullptr;  // A and B, BF16, sized for the largest GEMM so far
  void* output = nullptr;    // C, FP32
  std::size_t operand_bytes = 0, output_bytes = 0;

  void reserve(const GemmOp& op) {
    const std::size_t in = sizeof(__nv_bfloat16) * (static_cast<std::size_t>(op.m) * op.k +
                                                    static_cast<std::size_t>(op.k) * op.n);
    const std::size_t out = sizeof(float) * static_cast<std::size_t>(op.m) * op.n;
    if (in > operand_bytes) {
      if (operands) CUDACHECK(cudaFree(operands));
      CUDACHECK(cudaMalloc(&operands, in));
      fill_random(in / sizeof(__nv_bfloat16));
      operand_bytes = in;
    }
    if (out > output_bytes) {
      if (output) CUDACHECK(cudaFree(output));
      CUDACHECK(cudaMalloc(&output, out));
      output_bytes = out;
    }
  }

  // Uniform values in [-1, 1) from a fixed-seed splitmix64: a GEMM on constant
  // operands flips fewer bits, draws less power and runs faster than on real
  // data. On an H200, 8192^3 BF16 measured 868 TFLOP/s here with 0x3F3F in
  // every element, where PyTorch on random data measures about 790.
  void fill_random(std::size_t elements) {
    std::vector<__nv_bfloat16> host(elements);
    std::uint64_t state = 0x9E3779B97F4A7C15ull;
    for (auto& x : host) {
      std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      z ^= z >> 31;
      x = __float2bfloat16(static_cast<float>(z >> 40) / static_cast<float>(1 << 23) - 1.0f);
    }
    CUDACHECK(cudaMemcpy(operands, host.data(), elements * sizeof(__nv_bfloat16),
                         cudaMemcpyHostToDevice));
  }

  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands.
  void gemm(const GemmOp& op) {
    const float alpha = 1.0f, beta = 0.0f;
    const auto* a = static_cast<const __nv_bfloat16*>(operands);
    const auto* b = a + static_cast<std::size_t>(op.m) * op.k;
    const int lda = op.a_transposed ? op.m : op.k;  // row-major leading dimensions
    const int ldb = op.b_transposed ? op.k : op.n;
    CUBLASCHECK(cublasGemmEx(blas, op.b_transposed ? CUBLAS_OP_T : CUBLAS_OP_N,
                             op.a_transposed ? CUBLAS_OP_T : CUBLAS_OP_N, op.n, op.m, op.k, &alpha,
                             b, CUDA_R_16BF, ldb, a, CUDA_R_16BF, lda, &beta, output, CUDA_R_32F,
                             op.n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }

  double elapsed_s() {
    CUDACHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CUDACHECK(cudaEventElapsedTime(&ms, start, stop));
    return static_cast<double>(ms) * 1e-3;
  }
};

CudaDevice::CudaDevice(int device) : state_(std::make_unique<State>()) {
  state_->device = device;
  CUDACHECK(cudaSetDevice(device));
  CUDACHECK(cudaStreamCreate(&state_->stream));
  CUBLASCHECK(cublasCreate(&state_->blas));
  CUBLASCHECK(cublasSetStream(state_->blas, state_->stream));
  CUDACHECK(cudaEventCreate(&state_->start));
  CUDACHECK(cudaEventCreate(&state_->stop));
}

CudaDevice::~CudaDevice() {
  // Destructors do not throw: codes are ignored on the way out.
  cudaFree(state_->operands);
  cudaFree(state_->output);
  cudaEventDestroy(state_->start);
  cudaEventDestroy(state_->stop);
  cublasDestroy(state_->blas);
  cudaStreamDestroy(state_->stream);
}

std::string CudaDevice::name() const {
  cudaDeviceProp prop{};
  CUDACHECK(cudaGetDeviceProperties(&prop, state_->device));
  return prop.name;
}

int CudaDevice::index() const {
  return state_->device;
}

KernelTime CudaDevice::time_gemm(const GemmOp& op, int repeats) {
  state_->reserve(op);
  // Warm-up (cuBLAS picks and loads its kernel), then one warm call timed
  // alone for the batch size. Sized from the cold call, the batch was one
  // call: on an H200 that took the 2048 x 2048 x 128 shapes for 50 TFLOP/s
  // and an iteration of the plan's GEMMs for 42% slower than it ran.
  state_->gemm(op);
  CUDACHECK(cudaStreamSynchronize(state_->stream));
  CUDACHECK(cudaEventRecord(state_->start, state_->stream));
  state_->gemm(op);
  CUDACHECK(cudaEventRecord(state_->stop, state_->stream));
  const double one_s = state_->elapsed_s();
  // Each sample is a batch of back-to-back calls lasting about 1 ms, as the
  // iteration issues them: one call between two events also times the idle
  // GPU while the host launches it, which is most of a 20 us GEMM (on an
  // H200 the 2048 x 2048 x 128 shapes measured 55 TFLOP/s alone, and an
  // iteration of them ran 40% faster than that predicted).
  const int batch =
      static_cast<int>(std::clamp(std::ceil(1e-3 / std::max(one_s, 1e-7)), 1.0, 100.0));
  std::vector<double> seconds;
  for (int r = 0; r < std::max(1, repeats); ++r) {
    CUDACHECK(cudaEventRecord(state_->start, state_->stream));
    for (int i = 0; i < batch; ++i) state_->gemm(op);
    CUDACHECK(cudaEventRecord(state_->stop, state_->stream));
    seconds.push_back(state_->elapsed_s() / batch);
  }
  std::sort(seconds.begin(), seconds.end());
  return {seconds.front(), seconds[seconds.size() / 2]};
}

double CudaDevice::run_gemms_s(const std::vector<GemmOp>& ops) {
  for (const GemmOp& op : ops) state_->reserve(op);
  CUDACHECK(cudaStreamSynchronize(state_->stream));
  CUDACHECK(cudaEventRecord(state_->start, state_->stream));
  for (const GemmOp& op : ops)
    for (int i = 0; i < op.count; ++i) state_->gemm(op);
  CUDACHECK(cudaEventRecord(state_->stop, state_->stream));
  return state_->elapsed_s();
}

double CudaDevice::copy_Bps(std::size_t bytes, int repeats) {
  void* from = nullptr;
  void* to = nullptr;
  CUDACHECK(cudaMalloc(&from, bytes));
  CUDACHECK(cudaMalloc(&to, bytes));
  double best = 1e300;
  for (int r = 0; r <= std::max(1, repeats); ++r) {  // the first run warms up
    CUDACHECK(cudaEventRecord(state_->start, state_->stream));
    CUDACHECK(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, state_->stream));
    CUDACHECK(cudaEventRecord(state_->stop, state_->stream));
    const double s = state_->elapsed_s();
    if (r > 0) best = std::min(best, s);
  }
  CUDACHECK(cudaFree(from));
  CUDACHECK(cudaFree(to));
  return 2.0 * static_cast<double>(bytes) / best;
}

}  // namespace parashift::hw
