// All-reduce bus bandwidth by size over a job's communicator, on buffers in
// the memory of the ranks' DeviceKernels (host memory for the CPU flavour,
// GPU memory under NCCL for the CUDA flavour): nccl-tests' all_reduce_perf
// measure, busbw = bytes / time x 2(n-1)/n, the slowest rank's best of
// `repeats` per size.
#pragma once

#include <cstddef>
#include <vector>

#include "core/parallel_plan.hpp"
#include "hw/calib/calibration.hpp"
#include "hw/comm/communicator.hpp"
#include "hw/device/device_kernels.hpp"

namespace parashift::hw {

/// Collective over `world`: sizes 4 KiB, 32 KiB, ... up to `largest_bytes`
/// (x8 each), group "job". Empty on one rank.
std::vector<CollectivePoint> measure_all_reduce(Communicator& world, DeviceKernels& kernels,
                                                std::size_t largest_bytes, int repeats);

/// Collective over `world` (plan.gpus() ranks, else core::InputError): the
/// all-reduce inside the plan's tensor- and data-parallel groups of more
/// than one rank (hw/exec/comm_groups.hpp), every group of a kind at once as
/// training runs them, tagged "tp" / "dp"; each time the slowest rank's of
/// the job, so every rank returns the same points.
std::vector<CollectivePoint> measure_plan_all_reduce(Communicator& world, DeviceKernels& kernels,
                                                     const core::ParallelPlan& plan,
                                                     std::size_t largest_bytes, int repeats);

}  // namespace parashift::hw
