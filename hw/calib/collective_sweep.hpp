// nccl-tests' measure of one collective on a job's real ranks, for
// `parashift collectives --backend hw|cuda` (the CPU executor over MPI, or
// NCCL on GPUs): for each size, `warmup` untimed calls, then `iters` timed
// back to back between two barriers; a size's time is the slowest rank's
// mean per call on the wall clock. Every rank checks the result of its
// first call against the exact one (small integers, exact in float), as
// nccl-tests counts #wrong.
#pragma once

#include <vector>

#include "core/cost/work_profile.hpp"
#include "hw/comm/communicator.hpp"
#include "hw/device/device_kernels.hpp"

namespace parashift::hw {

struct SweepPoint {
  /// nccl-tests' size: each rank's buffer for all_reduce, the whole
  /// gathered buffer for all_gather and the whole input for reduce_scatter
  /// (rounded down to whole floats, and to a multiple of the ranks for
  /// those two).
  double bytes = 0;
  double seconds = 0;   // the slowest rank's mean per call
  long long wrong = 0;  // elements that differ from the exact result, over every rank
};

/// Whether the sweep runs `kind` ("" when it does): all_reduce, all_gather
/// and reduce_scatter; not alltoall or sendrecv.
const char* sweep_unsupported(core::CollectiveKind kind);

/// Collective over `world` (at least 2 ranks); `sizes` in bytes, each at
/// least one float per rank. Every rank returns the same points.
std::vector<SweepPoint> measure_collective(Communicator& world, DeviceKernels& kernels,
                                           core::CollectiveKind kind,
                                           const std::vector<double>& sizes, int warmup, int iters);

}  // namespace parashift::hw
