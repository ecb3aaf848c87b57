#include "tools/cli/device_run.hpp"
#include "tools/cli/format_number.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "core/work_split.hpp"
#include "hw/calib/predict.hpp"
#include "hw/device/device_calibration.hpp"

namespace parashift::tools {

double rank_model_flops(const core::Scenario& scenario) {
  const hw::ExecutorJob job = hw::executor_job(scenario);
  const core::ParallelPlan& plan = scenario.plan;
  const int layers = core::layers_on_stage(
      core::even_split(scenario.model.layers, plan.pp * plan.virtual_stages), plan.pp, 0);
  return 3.0 * hw::layer_forward_flops(hw::executor_layer_shape(job)) * layers *
         scenario.plan.micro_batches();
}

nlohmann::json report_device_run(hw::DeviceKernels& kernels, const core::Scenario& scenario,
                                 hw::OptimizerKind optimizer,
                                 const std::vector<double>& iteration_s,
                                 const std::vector<hw::CollectivePoint>& all_reduce,
                                 int calibration_repeats, CliContext& ctx) {
  const double flops = rank_model_flops(scenario);
  std::vector<double> steady(iteration_s.size() > 1 ? iteration_s.begin() + 1 : iteration_s.begin(),
                             iteration_s.end());
  std::sort(steady.begin(), steady.end());
  const double measured_s = steady.empty() ? 0.0 : steady[steady.size() / 2];
  nlohmann::json out{{"device", kernels.name()},
                     {"rank_model_flops_per_iteration", flops},
                     {"median_iteration_s", measured_s}};
  ctx.out << kernels.name() << ": median iteration " << fmt("%.3f", measured_s * 1e3) << " ms, "
          << fmt("%.4g", measured_s > 0 ? flops / measured_s / 1e12 : 0.0)
          << " model TFLOP/s per rank";
  if (scenario.plan.gpus() != 1 && all_reduce.empty()) {
    ctx.out << " (no prediction: the job's collectives were not measured)\n";
    return out;
  }
  const hw::ExecutorJob job = hw::executor_job(scenario, optimizer);
  hw::CalibrationProfile profile =
      hw::calibrate_device_kernels(kernels, hw::executor_layer_shape(job), calibration_repeats);
  profile.ranks = scenario.plan.gpus();
  profile.all_reduce = all_reduce;
  const double predicted_s =
      static_cast<double>(hw::predict_iteration(job, profile).iteration_ns) * 1e-9;
  double best_gemm = 0;
  for (const auto& g : profile.gemm) best_gemm = std::max(best_gemm, g.flops_per_s);
  ctx.out << "; best calibrated GEMM " << fmt("%.4g", best_gemm / 1e12) << " TFLOP/s; predicted "
          << fmt("%.3f", predicted_s * 1e3) << " ms from the calibrated kernels, error "
          << fmt("%+.1f", measured_s > 0 ? 100.0 * (predicted_s - measured_s) / measured_s : 0.0)
          << "%\n";
  out["predicted_iteration_s"] = predicted_s;
  out["best_gemm_flops_per_s"] = best_gemm;
  return out;
}

}  // namespace parashift::tools
