// `parashift run --backend cuda`'s body (tools/cli/device_run.hpp) on
// HostKernels: the shipped 1-GPU scenario, shrunk by overrides to a layer
// the CPU runs in microseconds, trains, prints every iteration and the
// calibrated prediction, and reports the model FLOPs it times against.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/scenario/scenario.hpp"
#include "hw/device/host_kernels.hpp"
#include "tools/cli/device_run.hpp"

using namespace parashift;

TEST_CASE("device run on host kernels: iterations, prediction and model FLOPs") {
  const core::Scenario scenario =
      core::load_scenario(PARASHIFT_SOURCE_DIR "/tests/hw/data/gpu-1rank.yaml",
                          {"model.hidden=32", "model.heads=4", "model.kv_heads=4",
                           "model.ffn_hidden=64", "training.seq_len=8"});
  hw::HostKernels kernels;
  tools::DeviceRunOptions options;
  options.iterations = 3;
  options.calibration_repeats = 3;
  std::ostringstream out, err;
  tools::CliContext ctx{out, err};
  const nlohmann::json run = tools::run_device_training(kernels, scenario, options, ctx);
  const std::string text = out.str();
  CAPTURE(text);
  CHECK(text.find("device host-eigen-fp32: 4 layers") != std::string::npos);
  CHECK(text.find("iteration 2  loss ") != std::string::npos);
  CHECK(text.find("predicted ") != std::string::npos);
  REQUIRE(run["iterations"].size() == 3);
  for (const auto& step : run["iterations"]) CHECK(std::isfinite(step["loss"].get<double>()));
  CHECK(run["predicted_iteration_s"].get<double>() > 0);
  // One layer's forward on 8 tokens, hidden 32, ffn 64, tp 1:
  //   GEMMs 2 x 8 x 32 x (3x32 + 32 + 2x64) = 131072, attention 4 x 8 x 8 x 32 = 8192;
  // x 3 (forward + backward) x 4 layers x 4 micro-batches (global batch 4 / 1) = 6684672.
  CHECK(run["model_flops_per_iteration"].get<double>() == 6684672.0);
  CHECK(kernels.live_buffers() == 0);
}
