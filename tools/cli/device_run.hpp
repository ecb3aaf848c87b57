// What `parashift run --backend cuda` adds after the executor's iterations
// on a device: the model TFLOP/s the iterations reached, and the iteration
// predicted from the same device's calibrated kernels
// (hw/device/device_calibration.hpp) and, for plans of more than one rank,
// the job's all-reduce bus bandwidth measured on the same communicator
// (hw/calib/collective_calibration.hpp), through hw::predict_iteration.
// Written against DeviceKernels, so the tests run it on HostKernels; the CLI
// hands it CudaKernels.
#pragma once

#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/scenario/scenario.hpp"
#include "hw/calib/calibration.hpp"
#include "hw/device/device_kernels.hpp"
#include "hw/model/optimizer.hpp"
#include "tools/cli/command.hpp"

namespace parashift::tools {

/// Model FLOPs of one iteration of `scenario` on one rank: forward and
/// backward (2x forward) of its stage's layers (stage 0, even split) for
/// every micro-batch of its replica (hw/model/layer.hpp counts a layer's
/// GEMMs and unmasked attention).
double rank_model_flops(const core::Scenario& scenario);

/// Prints the summary line to ctx.out and returns it as JSON.
/// `iteration_s` are the measured iterations (the first one, which pays
/// first-touch and library start-up, is left out of the median when there
/// are more). `calibration_repeats` per kernel.
/// `all_reduce`: the job's measured collectives (empty on one rank).
nlohmann::json report_device_run(hw::DeviceKernels& kernels, const core::Scenario& scenario,
                                 hw::OptimizerKind optimizer,
                                 const std::vector<double>& iteration_s,
                                 const std::vector<hw::CollectivePoint>& all_reduce,
                                 int calibration_repeats, CliContext& ctx);

}  // namespace parashift::tools
