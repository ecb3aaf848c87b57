// CUDA, cuBLAS and NCCL return codes become HwError here and nowhere else
// (NCCL's NCCLCHECK idiom): the message names the call, the file and line,
// and the library's own description of the code. Include only from hw/cuda.
#pragma once

#include <string>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include "hw/hw_error.hpp"

namespace parashift::hw::cuda_detail {

inline std::string where(const char* call, const char* file, int line) {
  return std::string(call) + " at " + file + ":" + std::to_string(line) + ": ";
}

inline void check(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess) throw HwError(where(call, file, line) + cudaGetErrorString(status));
}

inline void check(ncclResult_t status, const char* call, const char* file, int line) {
  if (status != ncclSuccess) throw HwError(where(call, file, line) + ncclGetErrorString(status));
}

inline void check(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw HwError(where(call, file, line) + cublasGetStatusString(status));
}

}  // namespace parashift::hw::cuda_detail

#define CUDACHECK(call) ::parashift::hw::cuda_detail::check((call), #call, __FILE__, __LINE__)
#define NCCLCHECK(call) ::parashift::hw::cuda_detail::check((call), #call, __FILE__, __LINE__)
#define CUBLASCHECK(call) ::parashift::hw::cuda_detail::check((call), #call, __FILE__, __LINE__)
