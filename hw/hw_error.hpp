// The error tier of hw/: a failed MPI, CUDA, NCCL or cuBLAS call, a broken
// protocol between ranks, or a snapshot shard that cannot be trusted becomes
// an HwError naming the call and the code. Return codes are converted here
// and nowhere else (NCCL's NCCLCHECK). An HwError is an environment error
// (core/errors.hpp): the CLI prints it with what to do and exits with 3.
#pragma once

#include <string>
#include <utility>

#include "core/errors.hpp"

namespace parashift::hw {

class HwError : public core::EnvironmentError {
 public:
  /// The remedy printed after the message when the thrower gives none.
  static constexpr const char* kDefaultRemedy =
      "check that every rank was launched with the same scenario (mpirun -np N), that the "
      "devices are present and that the snapshot directory is writable";

  explicit HwError(const std::string& message, std::string remedy = kDefaultRemedy)
      : core::EnvironmentError(message, std::move(remedy)) {}
};

}  // namespace parashift::hw
