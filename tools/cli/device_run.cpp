#include "tools/cli/device_run.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include <nlohmann/json.hpp>

#include "hw/calib/predict.hpp"
#include "hw/device/device_calibration.hpp"
#include "hw/device/device_trainer.hpp"

namespace parashift::tools {

namespace {

std::string fmt(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

}  // namespace

nlohmann::json run_device_training(hw::DeviceKernels& kernels, const core::Scenario& scenario,
                                   const DeviceRunOptions& options, CliContext& ctx) {
  const auto& plan = scenario.plan;
  hw::DeviceTrainer trainer(kernels, scenario.model, scenario.training.seq_len, scenario.run.seed,
                            plan, options.optimizer);
  const hw::LayerShape& shape = trainer.shape();
  // Model FLOPs of one iteration: forward + backward (2x forward) of every
  // layer for every micro-batch (hw/model/layer.hpp counts a layer's GEMMs
  // and unmasked attention).
  const double flops =
      3.0 * hw::layer_forward_flops(shape) * scenario.model.layers * plan.micro_batches();
  ctx.out << "device " << kernels.name() << ": " << scenario.model.layers << " layers, "
          << plan.label() << ", " << plan.micro_batches() << " micro-batch(es) of "
          << shape.tokens() << " tokens, "
          << fmt("%.2f", static_cast<double>(trainer.device_bytes()) / 1e9) << " GB resident\n";
  const hw::ExecutorJob job = hw::executor_job(scenario, options.optimizer.kind);
  const hw::CalibrationProfile profile =
      hw::calibrate_device_kernels(kernels, shape, options.calibration_repeats);
  const hw::IterationPrediction predicted = hw::predict_iteration(job, profile);
  double best_gemm = 0;
  for (const auto& g : profile.gemm) best_gemm = std::max(best_gemm, g.flops_per_s);

  nlohmann::json steps = nlohmann::json::array();
  std::vector<double> seconds;
  for (int i = 0; i < options.iterations; ++i) {
    kernels.synchronize();
    const auto start = std::chrono::steady_clock::now();
    const double loss = trainer.step();  // waits for the device
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    seconds.push_back(s);
    ctx.out << "iteration " << i << "  loss " << fmt("%.17g", loss) << "  time "
            << fmt("%.3f", s * 1e3) << " ms  " << fmt("%.1f", flops / s / 1e12) << " TFLOP/s\n";
    steps.push_back({{"iteration", i}, {"loss", loss}, {"iteration_s", s}});
  }
  // The first iteration pays first-touch and library start-up; the median
  // of the later ones is the steady state (all of them if there is one).
  std::vector<double> steady(seconds.size() > 1 ? seconds.begin() + 1 : seconds.begin(),
                             seconds.end());
  std::sort(steady.begin(), steady.end());
  const double measured_s = steady[steady.size() / 2];
  const double predicted_s = static_cast<double>(predicted.iteration_ns) * 1e-9;
  ctx.out << "median iteration " << fmt("%.3f", measured_s * 1e3) << " ms ("
          << fmt("%.1f", flops / measured_s / 1e12) << " TFLOP/s; best calibrated GEMM "
          << fmt("%.1f", best_gemm / 1e12) << " TFLOP/s), predicted "
          << fmt("%.3f", predicted_s * 1e3) << " ms from the calibrated kernels, error "
          << fmt("%+.1f", 100.0 * (predicted_s - measured_s) / measured_s) << "%\n";
  return {{"backend", "device"},
          {"device", kernels.name()},
          {"scenario", scenario.name},
          {"plan", plan.label()},
          {"model_flops_per_iteration", flops},
          {"median_iteration_s", measured_s},
          {"predicted_iteration_s", predicted_s},
          {"best_gemm_flops_per_s", best_gemm},
          {"iterations", steps}};
}

}  // namespace parashift::tools
