// `parashift run --backend cuda`'s device summary (tools/cli/device_run.hpp)
// after the executor ran on given kernels: here HostKernels, the shipped
// 1-GPU scenario shrunk by overrides to a layer the CPU runs in microseconds.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <thread>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/scenario/scenario.hpp"
#include "hw/calib/collective_calibration.hpp"
#include "hw/comm/self_communicator.hpp"
#include "hw/comm/thread_communicator.hpp"
#include "hw/device/host_kernels.hpp"
#include "hw/exec/training_run.hpp"
#include "tests/temp_dir.hpp"
#include "tools/cli/device_run.hpp"

using namespace parashift;

TEST_CASE("device summary after the executor ran on given kernels") {
  const core::Scenario scenario =
      core::load_scenario(PARASHIFT_SOURCE_DIR "/tests/hw/data/gpu-1rank.yaml",
                          {"model.hidden=32", "model.heads=4", "model.kv_heads=4",
                           "model.ffn_hidden=64", "training.seq_len=8"});
  hw::HostKernels kernels;
  hw::TrainingRunConfig config;
  config.iterations = 3;
  config.options.kernels = &kernels;
  config.options.resident_data = true;
  config.options.shm_root = parashift::test::process_temp_dir().path();
  config.options.job = "device-run-" + std::to_string(::getpid());
  hw::SelfCommunicator world;
  const hw::TrainingRunResult result = hw::run_training(scenario, config, world, {});
  REQUIRE(result.iterations.size() == 3);
  std::vector<double> seconds;
  for (const auto& rec : result.iterations)
    seconds.push_back(static_cast<double>(rec.report.iteration_ns) * 1e-9);

  std::ostringstream out, err;
  tools::CliContext ctx{out, err};
  const nlohmann::json summary =
      tools::report_device_run(kernels, scenario, hw::OptimizerKind::Adam, seconds, {}, 3, ctx);
  const std::string text = out.str();
  CAPTURE(text);
  CHECK(text.rfind("host-eigen-fp32: median iteration ", 0) == 0);
  CHECK(text.find("predicted ") != std::string::npos);
  CHECK(summary["predicted_iteration_s"].get<double>() > 0);
  // The median leaves the first iteration out: the middle of the other two
  // (the larger, index 1 of 2 sorted).
  CHECK(summary["median_iteration_s"].get<double>() == std::max(seconds[1], seconds[2]));
  // One layer's forward on 8 tokens, hidden 32, ffn 64, tp 1:
  //   GEMMs 2 x 8 x 32 x (3x32 + 32 + 2x64) = 131072, attention 4 x 8 x 8 x 32 = 8192;
  // x 3 (forward + backward) x 4 layers x 4 micro-batches (global batch 4 / 1) = 6684672.
  CHECK(tools::rank_model_flops(scenario) == 6684672.0);
  CHECK(summary["rank_model_flops_per_iteration"].get<double>() == 6684672.0);
}

TEST_CASE("device summary of a two-rank job predicts with the job's measured all-reduce") {
  // dp 2 on two threads, each rank on its own HostKernels; after the run
  // both ranks measure the all-reduce on the job's communicator (4 KiB,
  // 32 KiB), and rank 0's summary predicts the iteration with them.
  const core::Scenario scenario =
      core::load_scenario(PARASHIFT_SOURCE_DIR "/tests/hw/data/hw-cpu-2rank.yaml",
                          {"model.hidden=32", "model.heads=4", "model.kv_heads=4",
                           "model.ffn_hidden=64", "training.seq_len=8"});
  REQUIRE(scenario.plan.gpus() == 2);
  auto group = hw::make_thread_group(2);
  std::vector<double> seconds;
  std::vector<hw::CollectivePoint> all_reduce[2];
  hw::HostKernels kernels[2];
  auto rank = [&](int r) {
    hw::TrainingRunConfig config;
    config.iterations = 3;
    config.options.kernels = &kernels[r];
    config.options.resident_data = true;
    config.options.shm_root = parashift::test::process_temp_dir().path();
    config.options.job = "device-run2-" + std::to_string(::getpid());
    const auto result = hw::run_training(scenario, config, *group[static_cast<std::size_t>(r)], {});
    if (r == 0)
      for (const auto& rec : result.iterations)
        seconds.push_back(static_cast<double>(rec.report.iteration_ns) * 1e-9);
    all_reduce[r] = hw::measure_all_reduce(*group[static_cast<std::size_t>(r)], kernels[r],
                                           std::size_t{1} << 15, 2);
  };
  std::thread other(rank, 1);
  rank(0);
  other.join();
  // Sizes 4 KiB and 32 KiB, each a positive time and bus bandwidth.
  REQUIRE(all_reduce[0].size() == 2);
  CHECK(all_reduce[0][1].bytes == 32768.0);
  CHECK(all_reduce[0][0].bus_Bps > 0);

  std::ostringstream out, err;
  tools::CliContext ctx{out, err};
  const nlohmann::json summary = tools::report_device_run(
      kernels[0], scenario, hw::OptimizerKind::Adam, seconds, all_reduce[0], 3, ctx);
  CAPTURE(out.str());
  CHECK(summary["predicted_iteration_s"].get<double>() > 0);
  // Without the measurements a two-rank job gets no prediction, and says so.
  std::ostringstream bare;
  tools::CliContext bare_ctx{bare, err};
  const nlohmann::json none = tools::report_device_run(
      kernels[0], scenario, hw::OptimizerKind::Adam, seconds, {}, 3, bare_ctx);
  CHECK_FALSE(none.contains("predicted_iteration_s"));
  CHECK(bare.str().find("no prediction: the job's collectives were not measured") !=
        std::string::npos);
}
