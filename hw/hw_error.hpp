// The error tier of hw/: a failed MPI, CUDA, NCCL or cuBLAS call, or a
// broken protocol between ranks, becomes an HwError naming the call and the
// code. Return codes are converted here and nowhere else (NCCL's NCCLCHECK).
#pragma once

#include <stdexcept>
#include <string>

namespace parashift::hw {

class HwError : public std::runtime_error {
 public:
  explicit HwError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace parashift::hw
