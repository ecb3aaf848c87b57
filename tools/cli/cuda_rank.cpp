#include "tools/cli/cuda_rank.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "core/input_error.hpp"
#include "hw/cuda/cuda_probe.hpp"
#include "hw/cuda/nccl_communicator.hpp"

namespace parashift::tools {

void check_cuda_devices(int device) {
  const hw::CudaProbe probe = hw::probe_cuda();
  const int visible = static_cast<int>(probe.devices.size());
  const std::string seen =
      std::to_string(visible) + " visible" + (probe.note.empty() ? "" : ": " + probe.note);
  if (visible == 0)
    throw core::EnvironmentError("--backend cuda: no CUDA device (" + seen + ")",
                                 "run on a machine with a GPU, or use --backend hw");
  if (device >= visible)
    throw core::InputError("--device " + std::to_string(device) + ": no such CUDA device (" + seen +
                           ")");
}

CudaRank open_cuda_rank(hw::MpiSession& mpi, int device, hw::CudaMath math, CliContext& ctx,
                        core::NcclAlgo algo) {
  auto bootstrap = mpi.world();
  if (const std::string name = core::nccl_algo_env(algo); !name.empty())
    ::setenv("NCCL_ALGO", name.c_str(), 0);  // read by ncclCommInitRank; the user's wins
  try {
    const int visible = static_cast<int>(hw::probe_cuda().devices.size());
    const int gpu = device >= 0 ? device : bootstrap->rank() % std::max(1, mpi.ranks_per_node());
    if (gpu >= visible)
      throw core::InputError("rank " + std::to_string(bootstrap->rank()) + ": GPU " +
                             std::to_string(gpu) + " of its node, but the node has " +
                             std::to_string(visible) + " (one rank per GPU)");
    CudaRank rank;
    rank.kernels = std::make_unique<hw::CudaKernels>(gpu, math);
    rank.world = hw::make_nccl_world(*bootstrap, gpu);
    return rank;
  } catch (const std::exception& e) {
    const bool input = dynamic_cast<const core::InputError*>(&e) != nullptr;
    ctx.err << "parashift: " << (input ? "error" : "rank " + std::to_string(bootstrap->rank()))
            << ": " << e.what() << "\n";
    ctx.err.flush();
    mpi.abort_job(input ? 2 : 1);
  }
}

}  // namespace parashift::tools
