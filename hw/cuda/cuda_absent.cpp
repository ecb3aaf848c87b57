#include "hw/cuda/cuda_probe.hpp"

namespace parashift::hw {

CudaProbe probe_cuda() {
  CudaProbe probe;
  probe.note = "built without the CUDA toolkit / NCCL";
  return probe;
}

}  // namespace parashift::hw
