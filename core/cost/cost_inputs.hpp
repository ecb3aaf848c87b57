// What the cost model's estimate of a job needs: the model, the device and
// the cluster as the policy knows them (the presets, never a simulated
// cluster's hidden truth), and the sequence length. A backend whose kernels
// are not the cost model's (the CPU executor: fp32 Eigen GEMMs, no fused
// kernels, no overlap) gives its own work profile and options; every module
// that re-estimates the job goes through estimate() and work() here.
#pragma once

#include <functional>

#include "core/cost/cluster_view.hpp"
#include "core/cost/cost_options.hpp"
#include "core/cost/device_groups.hpp"
#include "core/cost/estimate.hpp"
#include "core/cost/work_profile.hpp"
#include "core/device_spec.hpp"
#include "core/model_spec.hpp"

namespace parashift::core {

struct CostInputs {
  ModelSpec model;
  DeviceSpec device;
  ClusterView cluster;
  int seq_len = 0;
  /// The software's choices (overlap, gradient bytes); Megatron's by default.
  CostOptions options;
  /// One plan's work on a device whose efficiencies may differ from
  /// `device`'s (the calibration scales them); empty: core::work_profile.
  std::function<WorkProfile(const DeviceSpec&, const ParallelPlan&)> work_model;
  /// A cluster of more than one device type (`cluster.groups`): each
  /// group's GPUs run at their compute factor on `device`
  /// (core/cost/device_groups.hpp). Empty: every GPU is `device`.
  std::vector<DeviceGroup> device_groups;

  WorkProfile work(const DeviceSpec& on, const ParallelPlan& plan) const;
  /// The iteration of `plan` on a device and cluster (the presets, or the
  /// calibrated ones).
  IterationEstimate estimate(const ParallelPlan& plan, const DeviceSpec& on,
                             const ClusterView& over) const;
  IterationEstimate estimate(const ParallelPlan& plan) const {
    return estimate(plan, device, cluster);
  }
};

}  // namespace parashift::core
