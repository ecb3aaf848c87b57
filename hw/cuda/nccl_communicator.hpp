// The CUDA flavour's collectives: an NCCL communicator behind the executor's
// Communicator interface. Spans of device memory (the executor's buffers on
// CudaKernels: activations, tp partial sums, dp gradient buckets) go to NCCL
// as they are; host spans (losses, reports, snapshot bytes) are staged
// through a device buffer on the communicator's stream.
// Groups are split with ncclCommSplit, so tp/pp/dp groups share the parent's
// NCCL bootstrap. Sends are deferred and go to NCCL grouped with the next
// receive or at flush_sends() (nccl_communicator.cpp says why); collectives
// refuse to run with sends still queued. NCCL has no tags: messages between
// two ranks arrive in the order they were sent, which is the order the
// executor's schedule posts them; the tag is checked to be non-negative and
// otherwise unused.
// Exists only when PARASHIFT_HAVE_CUDA.
#pragma once

#include <chrono>
#include <memory>

#include "hw/comm/communicator.hpp"

namespace parashift::hw {

/// Collective over `bootstrap`: rank 0 creates the NCCL id and sends it to the
/// others through `bootstrap` (MPI in the CPU flavour's launcher); every rank
/// then joins on CUDA device `device`. A call that sees an NCCL error, or
/// waits `patience` without anything finishing (a dead peer), aborts the
/// communicator and throws HwError (the job then restarts from snapshots).
std::unique_ptr<Communicator> make_nccl_world(
    Communicator& bootstrap, int device, std::chrono::seconds patience = std::chrono::minutes(10));

}  // namespace parashift::hw
