// What the CUDA flavour sees of the machine: devices, and the NCCL version
// it was built against. Compiled from cuda_probe.cu when the toolkit and NCCL
// are found, from cuda_absent.cpp otherwise.
#pragma once

#include <string>
#include <vector>

namespace parashift::hw {

struct CudaDeviceInfo {
  std::string name;
  double memory_bytes = 0;
  int sm_count = 0;
};

struct CudaProbe {
  bool built_with_cuda = false;
  int nccl_version = 0;  // NCCL_VERSION_CODE, 0 without NCCL
  std::vector<CudaDeviceInfo> devices;
  std::string note;  // why there are no devices, if there are none
};

CudaProbe probe_cuda();

}  // namespace parashift::hw
