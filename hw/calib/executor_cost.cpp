#include "hw/calib/executor_cost.hpp"

#include <algorithm>
#include <utility>

#include "core/scenario/cluster_view.hpp"
#include "hw/calib/predict.hpp"
#include "hw/model/layer_ops.hpp"

namespace parashift::hw {

CalibrationProfile scaled_profile(const CalibrationProfile& profile,
                                  const core::DeviceSpec& device) {
  // The preset device (device_from_profile) has every efficiency 1: a
  // calibrated efficiency e runs that class e times as fast as measured.
  const auto& e = device.efficiency;
  CalibrationProfile p = profile;
  for (GemmPoint& g : p.gemm) g.flops_per_s *= e.gemm_max;
  for (KernelPoint& k : p.kernels) {
    const bool softmax = k.kernel == to_string(PointwiseKind::CausalSoftmax) ||
                         k.kernel == to_string(PointwiseKind::CausalSoftmaxBackward);
    k.ns_per_element /= softmax ? e.attention : e.memory;
  }
  p.memory_Bps *= e.memory;
  return p;
}

core::CostInputs executor_cost_inputs(const core::Scenario& scenario,
                                      const CalibrationProfile& profile, OptimizerKind optimizer) {
  core::CostInputs in;
  in.model = scenario.model;
  in.device = device_from_profile(profile);
  in.cluster = core::cluster_view_of(in.device, scenario.plan.gpus(),
                                     std::max(1, scenario.topology.gpus_per_host()));
  in.cluster.nccl.algo = scenario.nccl_algo;  // as the simulator and the planner
  in.seq_len = scenario.training.seq_len;
  // The executor: every collective after the compute that produced it, fp32 gradients.
  in.options.overlap_grad_reduce = false;
  in.options.overlap_param_gather = false;
  in.options.tp_comm_overlap = false;
  in.options.grad_reduce_bytes = 4.0;
  const int seq_len = scenario.training.seq_len;
  in.work_model = [profile, optimizer, model = scenario.model, seq_len](
                      const core::DeviceSpec& device, const core::ParallelPlan& plan) {
    ExecutorJob job;
    job.model = &model;
    job.plan = &plan;
    job.seq_len = seq_len;
    job.optimizer = optimizer;
    return executor_work_profile(job, scaled_profile(profile, device));
  };
  // A profile without the executor's kernels fails here, before any rank runs.
  (void)in.work(in.device, scenario.plan);
  return in;
}

}  // namespace parashift::hw
