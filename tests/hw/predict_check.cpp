// Run under mpirun -np 2: the calibrated prediction of the CPU executor's
// iteration time against the measured one, for a data-parallel and a
// pipeline plan of tests/hw/data/hw-cpu-2rank.yaml (argv[1]).
//
// Each round calibrates the executor's kernels (hw::ExecutorKernelBench: every
// GEMM of its op list by shape and layout, GELU, softmax, data, loss, Adam;
// passes over all of them, each kernel's median over the passes) and runs the
// executor for 1 warm-up + 5 iterations, taking their median, with the two
// interleaved: 8 kernel passes before each iteration and after the last. The
// prediction is both the executor's op-list replay (hw::predict_iteration)
// and the simulator fed the same calibrated work (hw::executor_work_profile ->
// sim::simulate_iteration, Path network).
//
// Why interleaved: on the dev box (a 2-vCPU KVM guest) the speed of a core
// drifts by 10-40% over seconds while the guest sees its full share (the host
// is shared; e.g. the same iteration measured 230 ms and 389 ms in successive
// rounds, both at share 1.00). The earlier check calibrated each kernel in one
// ~1 ms burst before the iterations, so prediction and measurement sampled
// different speeds and the calibrated prediction alone varied by 40% between
// rounds; interleaved, both sample the same seconds of the machine.
//
// The dev box is also shared with other builds: kernel costs are thread CPU
// time, and the share of a core each rank gets is measured over the kernel
// passes (profile.cpu_share) and over the measured iterations (thread CPU /
// wall time; a rank waiting on MPI polls, so its CPU time runs on unless other
// work takes the core), the smallest rank's. A round where either is below
// 0.85 (other work holds the cores: bursty load also inflates kernels' CPU
// time, and rounds at share 0.5-0.7 missed by 14-25%) or where they differ by
// more than 0.05 is not used. Of the usable rounds the check compares the
// minimum of each (min of medians) rather than loosening the bound; with none,
// it skips (exit 77).
//
// Tolerance: the issue asks the calibrated simulator to predict the measured
// iteration within 10% on the same machine and plan: |pred - meas| / meas <= 0.10.
// Exit status 0 when both predictions meet it for both plans.
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

using namespace parashift;

namespace {

constexpr int kRounds = 5;
double min_share = 0.85;  // argv[2] may lower it, for experiments by hand
constexpr double kMaxShareChange = 0.05;
constexpr int kWarmup = 1;
constexpr int kPassesPerIteration = 8;  // 56 passes a round, about 1 s on the dev box
constexpr int kMeasured = 5;
constexpr double kTolerance = 0.10;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The smallest share of a core any rank got over the measured iterations:
// its thread CPU time over the wall time. A rank waiting on MPI polls, so its CPU time
// runs on while it waits unless other work takes the core.
double smallest_share(hw::Communicator& world, double cpu_s, double wall_s) {
  double share = -std::min(1.0, cpu_s / wall_s);
  world.all_reduce_max(std::span<double>(&share, 1));
  return -share;
}

struct Estimates {
  double measured_ms = 1e300, replay_ms = 1e300, simulated_ms = 1e300;
  int usable_rounds = 0;
  double lowest_share = 1.0;
};

Estimates run_plan(const core::Scenario& scenario, hw::Communicator& world) {
  hw::ExecutorJob job;
  job.model = &scenario.model;
  job.plan = &scenario.plan;
  job.seq_len = scenario.training.seq_len;
  job.optimizer = hw::OptimizerKind::Adam;
  hw::HwOptions options;
  options.job = "predict-check";
  hw::HwBackend backend(scenario.model, scenario.training.seq_len, scenario.run.seed, scenario.plan,
                        options, world);
  const sim::PathModel paths(scenario.topology);
  Estimates best;
  for (int round = 0; round < kRounds; ++round) {
    // The collectives are calibrated once per round with the quick sizes. The
    // kernels' passes alternate with the iterations (kPassesPerIteration before
    // each, and after the last), so both see the same machine: the speed of a
    // core under this guest drifts by 10-40% over seconds with its share at 1.
    hw::CalibrationProfile profile = hw::measure_calibration(world, true);
    hw::ExecutorKernelBench kernels(hw::executor_layer_shape(job));
    std::vector<double> iteration_ms;
    double iteration_cpu_s = 0, iteration_wall_s = 0;
    for (int i = 0; i < kWarmup + kMeasured; ++i) {
      kernels.run_passes(world, kPassesPerIteration);
      world.barrier();
      const double wall0 = hw::clock_s(hw::KernelClock::Wall);
      const double cpu0 = hw::clock_s(hw::KernelClock::ThreadCpu);
      const auto report = backend.step(scenario.plan);
      if (i < kWarmup) continue;
      iteration_cpu_s += hw::clock_s(hw::KernelClock::ThreadCpu) - cpu0;
      iteration_wall_s += hw::clock_s(hw::KernelClock::Wall) - wall0;
      iteration_ms.push_back(static_cast<double>(report.iteration_ns) / 1e6);
    }
    kernels.run_passes(world, kPassesPerIteration);
    kernels.write(world, profile);  // medians and the share of a core over all the passes
    const double iteration_share = smallest_share(world, iteration_cpu_s, iteration_wall_s);
    best.lowest_share = std::min({best.lowest_share, profile.cpu_share, iteration_share});
    const double measured = median(iteration_ms);
    const double replay =
        static_cast<double>(hw::predict_iteration(job, profile).iteration_ns) / 1e6;
    const core::DeviceSpec device = hw::device_from_profile(profile);
    sim::IterationInput input;
    input.model = &scenario.model;
    input.device = &device;
    input.plan = &scenario.plan;
    input.seq_len = scenario.training.seq_len;
    input.network = sim::NetworkModel::Path;
    const double simulated =
        static_cast<double>(
            sim::simulate_iteration(input, hw::executor_work_profile(job, profile), paths)
                .iteration_ns) /
        1e6;
    if (world.rank() == 0)
      std::printf(
          "  round %d: cpu share %.2f calibrating, %.2f in the iterations, measured median "
          "%.1f ms, replay %.1f ms, simulated %.1f ms\n",
          round, profile.cpu_share, iteration_share, measured, replay, simulated);
    if (profile.cpu_share < min_share || iteration_share < min_share ||
        std::abs(iteration_share - profile.cpu_share) > kMaxShareChange) {
      if (world.rank() == 0)
        std::printf(
            "  round %d not used: other work held the cores (share below %.2f or moved by "
            "more than %.2f)\n",
            round, min_share, kMaxShareChange);
      continue;
    }
    ++best.usable_rounds;
    best.measured_ms = std::min(best.measured_ms, measured);
    best.replay_ms = std::min(best.replay_ms, replay);
    best.simulated_ms = std::min(best.simulated_ms, simulated);
  }
  return best;
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
  for (const std::string plan : {"plan.dp=2", "plan.pp=2"}) {
    const std::string other = plan == "plan.dp=2" ? "plan.pp=1" : "plan.dp=1";
    const core::Scenario scenario = core::load_scenario(argv[1], {plan, other});
    if (world->rank() == 0) std::printf("%s\n", scenario.plan.label().c_str());
    const Estimates e = run_plan(scenario, *world);
    if (e.usable_rounds == 0) {
      if (world->rank() == 0)
        std::printf(
            "SKIP: no round with a steady core per rank (lowest cpu share %.2f); the "
            "machine is loaded by other work\n",
            e.lowest_share);
      return 77;
    }
    for (const auto& [name, predicted] :
         {std::pair{"replay", e.replay_ms}, std::pair{"simulated", e.simulated_ms}}) {
      const double error = std::abs(predicted - e.measured_ms) / e.measured_ms;
      const bool ok = error <= kTolerance;
      failures += ok ? 0 : 1;
      if (world->rank() == 0)
        std::printf("%s %s: predicted %.1f ms, measured %.1f ms (min of medians), error %.1f%%\n",
                    ok ? "PASS" : "FAIL", name, predicted, e.measured_ms, 100.0 * error);
    }
  }
  return failures == 0 ? 0 : 1;
}
