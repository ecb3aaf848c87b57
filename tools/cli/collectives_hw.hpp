// `parashift collectives --backend hw|cuda`: the sweep measured on the job's
// real ranks under mpirun (hw/calib/collective_sweep.hpp), MPI on CPU
// buffers or NCCL on GPU buffers, printed in the model's columns so the
// measured and modelled tables sit side by side.
#pragma once

#include <string>
#include <vector>

#include "core/cost/work_profile.hpp"
#include "tools/cli/command.hpp"

namespace parashift::tools {

struct HwSweepRequest {
  std::string op;  // as the user named it
  core::CollectiveKind kind = core::CollectiveKind::AllReduce;
  std::vector<double> sizes;  // bytes, ascending
  int warmup = 5;
  int iters = 20;
  std::string backend;  // "hw" or "cuda"
  std::string json_path;
};

/// Runs the sweep on this process's rank; rank 0 prints the table (and
/// writes the JSON). core::InputError for an op the communicator does not
/// run, a job of one rank, or `cuda` in a build without it; status 1 when
/// some result was wrong.
void run_collectives_hw(const HwSweepRequest& request, CliContext& ctx);

}  // namespace parashift::tools
