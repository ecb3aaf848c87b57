// A cluster of more than one device type (`cluster.groups`, e.g. 24 H100
// nodes and 8 A100 nodes): the cost model prices every plan on one
// reference device (the first group's) and each other group's GPUs as a
// compute factor on it, the time of one layer's forward, backward and
// recompute for the plan's micro-batch on that group's device over the
// reference's (work_profile on each: GEMM, attention and memory-bound
// kernels each at their device's rate). The factors go through the speed
// balance (core/cost/speed_balance.hpp) like a slow GPU's. Links are the
// topology's; a plan must fit the smallest HBM of the groups.
#pragma once

#include <string>
#include <vector>

#include "core/cost/cost_options.hpp"
#include "core/cost/speed_balance.hpp"
#include "core/device_spec.hpp"
#include "core/model_spec.hpp"
#include "core/parallel_plan.hpp"

namespace parashift::core {

struct DeviceGroup {
  DeviceSpec device;
  int first_gpu = 0;  // the group holds GPUs first_gpu .. first_gpu + gpus - 1
  int gpus = 0;
};

/// One layer's compute for one micro-batch of `plan` on `on` over on `reference`.
double compute_factor(const ModelSpec& model, const DeviceSpec& on, const DeviceSpec& reference,
                      const ParallelPlan& plan, int seq_len, const CostOptions& options);

/// Each GPU of a group whose device is not `reference` (by name) with its
/// compute_factor for `plan`, ascending by GPU.
std::vector<GpuFactor> group_factors(const std::vector<DeviceGroup>& groups, const ModelSpec& model,
                                     const DeviceSpec& reference, const ParallelPlan& plan,
                                     int seq_len, const CostOptions& options);

/// The least HBM of `reference` and the groups' devices.
double least_hbm_bytes(const std::vector<DeviceGroup>& groups, const DeviceSpec& reference);

/// "256 x h100-sxm-80gb", or each group's GPUs and device:
/// "192 x h100-sxm-80gb + 64 x a100-80gb".
std::string describe_devices(const std::vector<DeviceGroup>& groups, const DeviceSpec& device,
                             int gpus);

}  // namespace parashift::core
