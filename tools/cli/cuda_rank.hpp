// A GPU rank of a job launched by mpirun (or srun): its GPU, its kernels and
// the job's NCCL communicator, for `run --backend cuda` and `calibrate
// --backend cuda`. Exists only with the CUDA flavour and MPI.
#pragma once

#include <memory>

#include "core/cost/nccl_model.hpp"
#include "hw/comm/communicator.hpp"
#include "hw/cpu/mpi_session.hpp"
#include "hw/cuda/cuda_kernels.hpp"
#include "tools/cli/command.hpp"

namespace parashift::tools {

/// Before MPI starts: throws core::InputError when no GPU is visible, or
/// when `device` (>= 0: given by the user) is not one of them.
void check_cuda_devices(int device);

struct CudaRank {
  std::unique_ptr<hw::CudaKernels> kernels;
  std::unique_ptr<hw::Communicator> world;  // NCCL over the job's GPUs
};

/// Collective over `mpi`'s job: this rank's GPU (`device` when >= 0, else
/// its index on its node) and the NCCL world over all of them. A rank that
/// cannot open its GPU prints why and stops the whole job (the others would
/// wait for it in NCCL's start-up): exit 2 for bad input, 1 otherwise.
/// `algo` (the scenario's cluster.nccl_algo) becomes NCCL_ALGO unless the
/// environment already sets it.
CudaRank open_cuda_rank(hw::MpiSession& mpi, int device, hw::CudaMath math, CliContext& ctx,
                        core::NcclAlgo algo = core::NcclAlgo::Auto);

}  // namespace parashift::tools
