#include "tools/cli/collectives_hw.hpp"

#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "core/cost/nccl_model.hpp"
#include "core/input_error.hpp"
#include "hw/calib/collective_sweep.hpp"
#include "hw/device/host_kernels.hpp"
#include "tools/cli/output_file.hpp"
#ifdef PARASHIFT_HAVE_MPI
#include "hw/cpu/mpi_session.hpp"
#endif
#if defined(PARASHIFT_HAVE_CUDA) && defined(PARASHIFT_HAVE_MPI)
#define PARASHIFT_SWEEP_CUDA 1
#include "tools/cli/cuda_rank.hpp"
#endif

namespace parashift::tools {

void run_collectives_hw(const HwSweepRequest& r, CliContext& ctx) {
  if (const std::string why = hw::sweep_unsupported(r.kind); !why.empty())
    throw core::InputError("--backend " + r.backend + " --op " + r.op + ": " + why);
#ifndef PARASHIFT_HAVE_MPI
  throw core::InputError("--backend " + r.backend +
                         ": this parashift was built without MPI (install libopenmpi-dev and "
                         "build again)");
#else
  if (r.backend == "cuda") {
#ifndef PARASHIFT_SWEEP_CUDA
    throw core::InputError(
        "--backend cuda: this parashift was built without the CUDA toolkit and NCCL (configure "
        "with PARASHIFT_WITH_CUDA=ON)");
#else
    check_cuda_devices(-1);
#endif
  }
  hw::MpiSession mpi;
  std::unique_ptr<hw::Communicator> world = mpi.world();
  if (world->size() < 2)
    throw core::InputError("--backend " + r.backend +
                           ": a collective needs at least 2 ranks; launch the command with "
                           "mpirun -np N (each rank one process" +
                           (r.backend == "cuda" ? std::string(" and one GPU)") : ")"));
  const int ranks = world->size();
  std::unique_ptr<hw::DeviceKernels> host;
  hw::Communicator* group = world.get();
  hw::DeviceKernels* kernels = nullptr;
  std::string algorithm = "mpi";
#ifdef PARASHIFT_SWEEP_CUDA
  CudaRank cuda;
  if (r.backend == "cuda") {
    cuda = open_cuda_rank(mpi, -1, hw::CudaMath::Fp32, ctx);
    group = cuda.world.get();
    kernels = cuda.kernels.get();
    algorithm = "nccl";
  }
#endif
  if (kernels == nullptr) {
    host = std::make_unique<hw::HostKernels>();
    kernels = host.get();
  }
  const std::vector<hw::SweepPoint> points =
      hw::measure_collective(*group, *kernels, r.kind, r.sizes, r.warmup, r.iters);
  if (world->rank() != 0) return;
  std::ostream& out = ctx.out;
  out << "# parashift collectives: " << r.op << " on " << ranks << " ranks, measured (" << algorithm
      << (r.backend == "cuda" ? " on GPU buffers" : " on host buffers")
      << "): the slowest rank's mean of " << r.iters << " calls after " << r.warmup
      << " warm-up, wall clock\n";
  out << "#       size         count      type      time     algbw     busbw  algorithm  #wrong\n";
  out << "#        (B)    (elements)                (us)    (GB/s)    (GB/s)\n";
  nlohmann::json rows = nlohmann::json::array();
  long long wrong = 0;
  char line[160];
  for (const hw::SweepPoint& p : points) {
    const double algbw = p.seconds > 0 ? p.bytes / p.seconds / 1e9 : 0.0;
    const double busbw = algbw * core::nccl_bus_factor(r.kind, ranks);
    std::snprintf(line, sizeof line, "%12.0f  %12.0f  %8s  %8.2f  %8.2f  %8.2f  %9s  %6lld\n",
                  p.bytes, p.bytes / 4.0, "float", p.seconds * 1e6, algbw, busbw, algorithm.c_str(),
                  p.wrong);
    out << line;
    wrong += p.wrong;
    rows.push_back({{"op", r.op},
                    {"bytes", p.bytes},
                    {"time_us", p.seconds * 1e6},
                    {"algbw_GBps", algbw},
                    {"busbw_GBps", busbw},
                    {"algo", algorithm},
                    {"wrong", p.wrong}});
  }
  out << "# out of bounds values: " << wrong << (wrong == 0 ? " OK" : " FAILED") << "\n";
  if (!r.json_path.empty()) write_json_file(r.json_path, rows);
  if (wrong != 0) ctx.status = 1;
#endif
}

}  // namespace parashift::tools
