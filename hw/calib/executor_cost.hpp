// The policy's cost model of the CPU executor, from a calibration profile
// (parashift calibrate --backend hw --scenario ...): what `calibrate` and the
// other modules that re-estimate the job start from on `run --backend hw`,
// in place of the scenario's GPU preset. The work is the executor's own op
// list timed with the profile's kernels (executor_work_profile), each kernel
// class scaled by the device efficiency the calibration moves (GEMMs by
// gemm_max, softmax by attention, element-wise kernels and streams by
// memory: the preset device has all three at 1); the links run at the
// profile's best all-reduce bus bandwidth; the software is the executor's:
// no communication overlap, fp32 gradients.
#pragma once

#include "core/cost/cost_inputs.hpp"
#include "core/scenario/scenario.hpp"
#include "hw/calib/calibration.hpp"
#include "hw/model/optimizer.hpp"

namespace parashift::hw {

/// The profile's kernels scaled by `device`'s efficiencies (1: as measured).
CalibrationProfile scaled_profile(const CalibrationProfile& profile,
                                  const core::DeviceSpec& device);

/// Throws core::InputError naming what is missing when the profile has no
/// GEMM points, no memory bandwidth, or not the executor's kernels (a
/// profile calibrated without --scenario).
core::CostInputs executor_cost_inputs(const core::Scenario& scenario,
                                      const CalibrationProfile& profile, OptimizerKind optimizer);

}  // namespace parashift::hw
