#include <cuda_runtime.h>
#include <nccl.h>

#include "hw/cuda/cuda_probe.hpp"

namespace parashift::hw {

CudaProbe probe_cuda() {
  CudaProbe probe;
  probe.built_with_cuda = true;
  probe.nccl_version = NCCL_VERSION_CODE;
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    probe.note = cudaGetErrorString(status);
    return probe;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    probe.devices.push_back(
        {prop.name, static_cast<double>(prop.totalGlobalMem), prop.multiProcessorCount});
  }
  if (count == 0) probe.note = "no CUDA device visible";
  return probe;
}

}  // namespace parashift::hw
