#include "hw/calib/counted_profile.hpp"

#include "hw/calib/executor_kernels.hpp"
#include "hw/calib/predict.hpp"
#include "hw/model/layer_ops.hpp"

namespace parashift::hw {

CalibrationProfile counted_profile(const core::Scenario& scenario, core::TimeNs unit_ns,
                                   const VirtualLink& link) {
  // One layer's forward over one sequence on one rank (tp 1, micro-batch 1).
  core::ParallelPlan unit_plan = scenario.plan;
  unit_plan.tp = 1;
  unit_plan.micro_batch = 1;
  unit_plan.sequence_parallel = false;
  ExecutorJob job = executor_job(scenario);
  job.plan = &unit_plan;
  const double flops = gemm_flops(layer_forward_ops(executor_layer_shape(job)));
  CalibrationProfile p;
  p.device = "cpu-counted";
  p.ranks = scenario.plan.gpus();
  GemmPoint rate;
  rate.m = rate.n = rate.k = 1;
  rate.flops_per_s = flops / (static_cast<double>(unit_ns) * 1e-9);
  p.gemm.push_back(rate);
  constexpr double kFree = 1e-12;  // ns per element, B/s: counted work charges neither
  p.memory_Bps = 1.0 / kFree;
  for (const PointwiseKind k : {PointwiseKind::Gelu, PointwiseKind::GeluBackward,
                                PointwiseKind::CausalSoftmax, PointwiseKind::CausalSoftmaxBackward})
    p.kernels.push_back({to_string(k), kFree});
  for (const char* k : {kDataKernel, kLossKernel, kSgdKernel, kAdamKernel})
    p.kernels.push_back({k, kFree});
  const int ranks = p.ranks;
  if (ranks > 1)
    for (double bytes = 1024; bytes <= 64.0 * 1024 * 1024; bytes *= 4) {
      CollectivePoint c;
      c.bytes = bytes;
      c.seconds = static_cast<double>(
                      virtual_collective_ns(core::CollectiveKind::AllReduce, bytes, ranks, link)) *
                  1e-9;
      c.bus_Bps = bytes * 2.0 * (ranks - 1) / ranks / c.seconds;
      p.all_reduce.push_back(c);
    }
  return p;
}

}  // namespace parashift::hw
