// Run under mpirun -np 2: the calibrated prediction of the CPU executor's
// iteration time against the measured one, for a data-parallel plan and
// pipeline plans (1F1B, ZB-H1, interleaved 1F1B with two chunks per stage),
// with selective and full activation recompute, tensor-parallel plans with
// and without sequence parallelism, and dp 2 with the distributed optimizer,
// of tests/hw/data/hw-cpu-2rank.yaml (argv[1]).
//
// The kernels are calibrated by hw::ExecutorKernelBench (every GEMM of the
// executor's op list by shape and layout, GELU, softmax, data, loss, Adam;
// each kernel's median over passes of all of them) and the collectives by
// hw::measure_calibration. The prediction is both the executor's op-list
// replay (hw::predict_iteration) and the simulator fed the same calibrated
// work (hw::executor_work_profile -> sim::simulate_iteration, Path network).
//
// Pairing: on the dev box (a 2-vCPU guest on a shared host) the speed of a
// core drifts by 10-40% over seconds while the guest sees its full share, so
// a calibration taken before a run predicts a machine that is gone by the
// time the run is measured. Each measured iteration is therefore bracketed by
// kPassesAround kernel passes before and after it, and predicted from the
// medians of exactly those passes: prediction and measurement sample the same
// second of the machine. The collectives (a few ms of the iteration) are
// recalibrated every kIterationsPerBlock iterations.
//
// The result per plan and predictor is the median over the iterations of
// predicted / measured; the check asks |median - 1| <= 10% (the issue: the
// calibrated simulator predicts the measured iteration within 10% on the same
// machine and plan). The 10th and 90th percentiles are printed, as the spread
// of single iterations is what the machine's noise leaves.
//
// Shares: kernel costs are thread CPU time and the executor is timed on the
// wall clock, so a core taken by other work (builds sharing the dev box)
// inflates the measured iteration but not the kernels. An iteration whose
// ranks got less than kMinShare of a core (thread CPU / wall time over the
// iteration or its passes; a rank waiting on MPI polls, so its CPU time runs
// on unless other work takes the core) is not used; with fewer than
// kMinUsable usable iterations the check skips (exit 77).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "core/scenario/scenario.hpp"
#include "hw/calib/calibration.hpp"
#include "hw/calib/executor_kernels.hpp"
#include "hw/calib/kernel_timer.hpp"
#include "hw/calib/predict.hpp"
#include "hw/cpu/mpi_session.hpp"
#include "hw/exec/hw_backend.hpp"
#include "sim/iteration.hpp"
#include "tests/temp_dir.hpp"

using namespace parashift;

namespace {

constexpr int kWarmup = 2;
constexpr int kIterations = 24;
constexpr int kIterationsPerBlock = 6;
constexpr int kPassesAround = 4;  // 8 passes per iteration, about 0.15 s on the dev box
constexpr int kMinUsable = 12;
double min_share = 0.85;  // argv[2] may lower it, for experiments by hand
constexpr double kTolerance = 0.10;

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const auto at = static_cast<std::size_t>(std::lround(q * static_cast<double>(v.size() - 1)));
  return v[at];
}

// The smallest share of a core any rank got over a stretch of cpu_s thread
// CPU time in wall_s seconds.
double smallest_share(hw::Communicator& world, double cpu_s, double wall_s) {
  double share = -std::min(1.0, cpu_s / wall_s);
  world.all_reduce_max(std::span<double>(&share, 1));
  return -share;
}

struct Ratios {
  std::vector<double> replay, simulated, measured_ms;
  double lowest_share = 1.0;
};

Ratios run_plan(const core::Scenario& scenario, hw::Communicator& world) {
  const hw::ExecutorJob job = hw::executor_job(scenario, hw::OptimizerKind::Adam);
  hw::HwOptions options;
  options.job = "predict-check";
  options.shm_root = parashift::test::process_temp_dir().path();  // never /dev/shm's shared names
  hw::HwBackend backend(scenario.model, scenario.training.seq_len, scenario.run.seed, scenario.plan,
                        options, world);
  const sim::PathModel paths(scenario.topology);
  hw::ExecutorKernelBench kernels(hw::executor_layer_shape(job));
  for (int i = 0; i < kWarmup; ++i) backend.step(scenario.plan);
  Ratios out;
  hw::CalibrationProfile collectives;
  for (int i = 0; i < kIterations; ++i) {
    if (i % kIterationsPerBlock == 0) collectives = hw::measure_calibration(world, true);
    kernels.clear();
    kernels.run_passes(world, kPassesAround);
    world.barrier();
    const double wall0 = hw::clock_s(hw::KernelClock::Wall);
    const double cpu0 = hw::clock_s(hw::KernelClock::ThreadCpu);
    const core::StepReport report = backend.step(scenario.plan);
    const double share = smallest_share(world, hw::clock_s(hw::KernelClock::ThreadCpu) - cpu0,
                                        hw::clock_s(hw::KernelClock::Wall) - wall0);
    kernels.run_passes(world, kPassesAround);
    hw::CalibrationProfile profile = collectives;
    kernels.write(world, profile);  // medians and share of a core over the 2 x kPassesAround passes

    const double measured = static_cast<double>(report.iteration_ns) / 1e6;
    const double replay =
        static_cast<double>(hw::predict_iteration(job, profile).iteration_ns) / 1e6;
    const core::DeviceSpec device = hw::device_from_profile(profile);
    const sim::IterationInput input =
        sim::scenario_input(scenario, device, sim::NetworkModel::Path);
    const double simulated =
        static_cast<double>(
            sim::simulate_iteration(input, hw::executor_work_profile(job, profile), paths)
                .iteration_ns) /
        1e6;
    const bool usable = share >= min_share && profile.cpu_share >= min_share;
    out.lowest_share = std::min({out.lowest_share, share, profile.cpu_share});
    if (world.rank() == 0)
      std::printf(
          "  iteration %2d: measured %6.1f ms, replay %6.1f, simulated %6.1f (cpu share "
          "%.2f / %.2f)%s\n",
          i, measured, replay, simulated, share, profile.cpu_share,
          usable ? "" : " not used: other work held the cores");
    if (!usable) continue;
    out.measured_ms.push_back(measured);
    out.replay.push_back(replay / measured);
    out.simulated.push_back(simulated / measured);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    std::fprintf(stderr, "usage: mpirun -np 2 hw_predict_check SCENARIO.yaml [MIN_CPU_SHARE]\n");
    return 2;
  }
  if (argc == 3) min_share = std::stod(argv[2]);
  hw::MpiSession mpi;
  auto world = mpi.world();
  int failures = 0;
  const std::vector<std::vector<std::string>> plans{
      {"plan.dp=2", "plan.pp=1"},
      {"plan.pp=2", "plan.dp=1"},
      {"plan.pp=2", "plan.dp=1", "plan.schedule=zb_h1"},
      {"plan.pp=2", "plan.dp=1", "plan.schedule=interleaved_1f1b", "plan.virtual_stages=2"},
      {"plan.dp=2", "plan.pp=1", "plan.recompute=selective"},
      {"plan.pp=2", "plan.dp=1", "plan.recompute=full"},
      {"plan.tp=2", "plan.dp=1", "plan.pp=1"},
      {"plan.tp=2", "plan.dp=1", "plan.pp=1", "plan.sequence_parallel=true"},
      {"plan.dp=2", "plan.pp=1", "plan.optimizer_sharding=distributed"}};
  for (const auto& overrides : plans) {
    const core::Scenario scenario = core::load_scenario(argv[1], overrides);
    if (world->rank() == 0) std::printf("%s\n", scenario.plan.label().c_str());
    const Ratios r = run_plan(scenario, *world);
    if (static_cast<int>(r.measured_ms.size()) < kMinUsable) {
      if (world->rank() == 0)
        std::printf(
            "SKIP: %zu of %d iterations had a steady core per rank (lowest cpu share %.2f); the "
            "machine is loaded by other work\n",
            r.measured_ms.size(), kIterations, r.lowest_share);
      return 77;
    }
    for (const auto& [name, ratios] :
         {std::pair{"replay", &r.replay}, std::pair{"simulated", &r.simulated}}) {
      const double median = quantile(*ratios, 0.5);
      const bool ok = std::abs(median - 1.0) <= kTolerance;
      failures += ok ? 0 : 1;
      if (world->rank() == 0)
        std::printf(
            "%s %s: predicted / measured median %.3f (error %.1f%%; 10th-90th percentile "
            "%.3f-%.3f) over %zu iterations, measured median %.1f ms\n",
            ok ? "PASS" : "FAIL", name, median, 100.0 * std::abs(median - 1.0),
            quantile(*ratios, 0.1), quantile(*ratios, 0.9), ratios->size(),
            quantile(r.measured_ms, 0.5));
    }
  }
  return failures == 0 ? 0 : 1;
}
