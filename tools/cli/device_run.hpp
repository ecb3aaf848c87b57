// `parashift run SCENARIO --backend cuda`: a one-rank plan's training
// iterations on a device (hw/device/device_trainer.hpp), each iteration's
// loss, time and model TFLOP/s, and the iteration predicted from the same
// device's calibrated kernels (hw/device/device_calibration.hpp, then
// hw::predict_iteration). Written against DeviceKernels, so the tests run it
// on HostKernels; the CLI hands it CudaKernels.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "core/scenario/scenario.hpp"
#include "hw/device/device_kernels.hpp"
#include "hw/model/optimizer.hpp"
#include "tools/cli/command.hpp"

namespace parashift::tools {

struct DeviceRunOptions {
  int iterations = 1;
  hw::OptimizerConfig optimizer;
  int calibration_repeats = 10;
};

/// Prints to ctx.out; returns the run as JSON (the --json file).
nlohmann::json run_device_training(hw::DeviceKernels& kernels, const core::Scenario& scenario,
                                   const DeviceRunOptions& options, CliContext& ctx);

}  // namespace parashift::tools
