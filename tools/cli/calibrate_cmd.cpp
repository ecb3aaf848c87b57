// `parashift calibrate --backend hw|cuda [--out FILE]`: GEMM and collective
// micro-benchmarks on this machine (run under mpirun for the collectives:
// MPI between CPU ranks, NCCL between GPUs), written as a device profile the
// cost model can load. With --scenario it
// also measures the executor's own kernels for that scenario's layer shape
// (the input of `parashift run --backend sim --profile`).
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/input_error.hpp"
#include "core/scenario/scenario.hpp"
#include "hw/calib/calibration.hpp"
#include "hw/calib/collective_calibration.hpp"
#include "hw/calib/executor_kernels.hpp"
#include "hw/calib/predict.hpp"
#include "hw/device/host_kernels.hpp"
#include "tools/cli/command.hpp"
#include "tools/cli/format_number.hpp"
#include "tools/cli/output_file.hpp"

#ifdef PARASHIFT_HAVE_MPI
#include "hw/cpu/mpi_session.hpp"
#endif
#ifdef PARASHIFT_HAVE_CUDA
#include <algorithm>

#include "core/device_spec.hpp"
#include "hw/cuda/cuda_calibration.hpp"
#endif
#if defined(PARASHIFT_HAVE_CUDA) && defined(PARASHIFT_HAVE_MPI)
#include "tools/cli/cuda_rank.hpp"
#endif

namespace parashift::tools {

namespace {

struct CalibrateOptions {
  std::string backend = "hw";
  std::string out_path;
  bool quick = false;
  std::string scenario;
  std::vector<std::string> overrides;
  int device = -1;               // cuda: which GPU (-1: not given; 0, or each rank its own)
  std::string peak_of = "h200";  // cuda: the datasheet the measured rates are compared with
};

void print_all_reduce(const hw::CalibrationProfile& profile, CliContext& ctx) {
  for (const auto& c : profile.all_reduce)
    ctx.out << "all-reduce " << (c.group == "job" ? "" : c.group + " groups ")
            << fmt("%.0f", c.bytes) << " B  " << fmt("%.1f", c.seconds * 1e6) << " us  bus "
            << fmt("%.3f", c.bus_Bps / 1e9) << " GB/s\n";
}

// With --scenario on as many ranks as its plan: the all-reduce inside the
// plan's tp and dp groups too (one line when the job is another size).
void add_plan_all_reduce(hw::Communicator& world, hw::DeviceKernels& kernels,
                         const core::ParallelPlan& plan, std::size_t largest, int repeats,
                         hw::CalibrationProfile& profile, CliContext& ctx) {
  if (world.size() != plan.gpus()) {
    if (world.rank() == 0)
      ctx.out << "plan groups not measured: " << plan.label() << " has " << plan.gpus()
              << " ranks, this job " << world.size() << "\n";
    return;
  }
  for (auto& point : hw::measure_plan_all_reduce(world, kernels, plan, largest, repeats))
    profile.all_reduce.push_back(point);
}

#ifdef PARASHIFT_HAVE_CUDA
// One GPU: BF16 GEMM rates against the datasheet peak, and with --scenario one
// rank's GEMMs of an iteration of its plan run back to back (CUDA events)
// against their sum predicted from the calibrated rates. Under mpirun with
// more ranks, one GPU each: first the all-reduce bus bandwidth over NCCL on
// GPU buffers (hw::measure_all_reduce), then rank 0 times its GPU.
void run_calibrate_cuda(const CalibrateOptions& opts, CliContext& ctx) {
  std::vector<hw::CollectivePoint> all_reduce;
  int ranks = 1;
#ifdef PARASHIFT_HAVE_MPI
  check_cuda_devices(opts.device);
  hw::MpiSession mpi;
  ranks = mpi.world()->size();
  if (ranks > 1) {
    if (opts.device >= 0)
      throw core::InputError(
          "--device " + std::to_string(opts.device) + ": with " + std::to_string(ranks) +
          " ranks each takes its GPU by its index on the node; leave --device out");
    const CudaRank rank = open_cuda_rank(mpi, -1, hw::CudaMath::Fp32, ctx);
    const std::size_t largest = opts.quick ? (std::size_t{1} << 20) : (std::size_t{1} << 30);
    all_reduce = hw::measure_all_reduce(*rank.world, *rank.kernels, largest, opts.quick ? 2 : 5);
    if (!opts.scenario.empty()) {
      hw::CalibrationProfile groups;
      add_plan_all_reduce(*rank.world, *rank.kernels,
                          core::load_scenario(opts.scenario, opts.overrides).plan, largest,
                          opts.quick ? 2 : 5, groups, ctx);
      all_reduce.insert(all_reduce.end(), groups.all_reduce.begin(), groups.all_reduce.end());
    }
    if (mpi.world()->rank() != 0) return;
  }
#endif
  hw::CudaDevice device(std::max(0, opts.device));
  const double peak = core::device_preset(opts.peak_of).peak_bf16_flops_per_s;
  std::optional<core::Scenario> scenario;
  std::vector<hw::GemmOp> shapes;
  hw::ExecutorJob job;
  if (!opts.scenario.empty()) {
    scenario = core::load_scenario(opts.scenario, opts.overrides);
    job = hw::executor_job(*scenario);
    shapes = hw::distinct_gemms(hw::executor_layer_shape(job));
  }
  const int repeats = opts.quick ? 5 : 20;
  auto profile = hw::measure_cuda_calibration(device, shapes, repeats);
  profile.ranks = ranks;
  profile.all_reduce = all_reduce;
  ctx.out << "GEMM (" << profile.device << ", cuBLAS, median of " << repeats << ") against "
          << opts.peak_of << "'s " << fmt("%.0f", peak / 1e12) << " TFLOP/s dense BF16\n";
  for (const auto& g : profile.gemm)
    ctx.out << "  " << g.m << " x " << g.n << " x " << g.k << (g.a_transposed ? " A^T" : "")
            << (g.b_transposed ? " B^T" : "") << "  " << fmt("%.1f", g.flops_per_s / 1e12)
            << " TFLOP/s  (" << fmt("%.0f", 100.0 * g.flops_per_s / peak) << "% of peak)\n";
  ctx.out << "device copy  " << fmt("%.0f", profile.memory_Bps / 1e9) << " GB/s\n";
  print_all_reduce(profile, ctx);
  if (scenario) {
    const auto ops = hw::iteration_gemm_ops(job);
    double predicted_s = 0;
    for (const auto& op : ops) predicted_s += hw::gemm_op_s(profile, op) * op.count;
    std::vector<double> measured;
    for (int r = 0; r < 5; ++r) measured.push_back(device.run_gemms_s(ops));
    std::sort(measured.begin(), measured.end());
    const double m = measured[measured.size() / 2];
    ctx.out
        << "GEMM iteration (one rank of " << scenario->plan.label()
        << ": the executor's layer GEMM shapes in BF16, all micro-batches, forward + backward): "
           "measured "
        << fmt("%.3f", m * 1e3) << " ms, predicted " << fmt("%.3f", predicted_s * 1e3)
        << " ms, error " << fmt("%.1f", 100.0 * (predicted_s - m) / m) << "%\n";
  }
  if (!opts.out_path.empty()) {
    write_json_file(opts.out_path, hw::to_json(profile));
    ctx.out << "wrote " << opts.out_path << "\n";
  }
}
#endif

void run_calibrate(const CalibrateOptions& opts, CliContext& ctx) {
  if (opts.backend == "cuda") {
#ifdef PARASHIFT_HAVE_CUDA
    return run_calibrate_cuda(opts, ctx);
#else
    throw core::InputError(
        "calibrate --backend cuda: this parashift was built without the CUDA "
        "toolkit and NCCL (configure with PARASHIFT_WITH_CUDA=ON)");
#endif
  }
#ifdef PARASHIFT_HAVE_MPI
  hw::MpiSession mpi;
  auto world = mpi.world();
  auto profile = hw::measure_calibration(*world, opts.quick);
  if (!opts.scenario.empty()) {
    const core::Scenario scenario = core::load_scenario(opts.scenario, opts.overrides);
    const hw::ExecutorJob job = hw::executor_job(scenario);
    // Also sets the share of a core the ranks got over those passes.
    hw::measure_executor_kernels(*world, hw::executor_layer_shape(job), opts.quick ? 10 : 40,
                                 profile);
    hw::HostKernels host;
    add_plan_all_reduce(*world, host, scenario.plan,
                        opts.quick ? (std::size_t{1} << 16) : (std::size_t{1} << 24),
                        opts.quick ? 2 : 5, profile, ctx);
  }
  if (world->rank() != 0) return;
  ctx.out << "GEMM (fp32, Eigen, slowest of " << profile.ranks << " rank(s) running at once)\n";
  for (const auto& g : profile.gemm)
    ctx.out << "  " << g.m << " x " << g.n << " x " << g.k << (g.a_transposed ? " A^T" : "")
            << (g.b_transposed ? " B^T" : "") << "  " << fmt("%.2f", g.flops_per_s / 1e9)
            << " GFLOP/s\n";
  ctx.out << "memory copy  " << fmt("%.2f", profile.memory_Bps / 1e9) << " GB/s per rank\n";
  print_all_reduce(profile, ctx);
  if (!profile.kernels.empty())
    ctx.out << "cpu share " << fmt("%.2f", profile.cpu_share) << " of a core per rank\n";
  for (const auto& k : profile.kernels)
    ctx.out << "kernel " << k.kernel << "  " << fmt("%.3f", k.ns_per_element)
            << " ns per element\n";
  const auto device = hw::device_from_profile(profile);
  ctx.out << "device profile: peak " << fmt("%.2f", device.peak_bf16_flops_per_s / 1e9)
          << " GFLOP/s, gemm_half_dim " << fmt("%.1f", device.efficiency.gemm_half_dim) << ", link "
          << fmt("%.3f", device.nvlink_Bps / 1e9) << " GB/s\n";
  if (!opts.out_path.empty()) {
    write_json_file(opts.out_path, hw::to_json(profile));
    ctx.out << "wrote " << opts.out_path << "\n";
  }
#else
  (void)opts;
  (void)ctx;
  throw core::InputError("calibrate --backend hw: this parashift was built without MPI");
#endif
}

}  // namespace

void add_calibrate_command(CLI::App& app, CliContext& ctx) {
  auto opts = std::make_shared<CalibrateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate",
      "Measure GEMM throughput by shape and all-reduce bus bandwidth by size on this machine "
      "(mpirun -np N parashift calibrate --backend hw for the collectives) and write a device "
      "profile");
  cmd->footer(
      "Examples:\n"
      "  parashift calibrate --backend cuda --quick --out h200.json\n"
      "  mpirun -np 4 --oversubscribe parashift calibrate --backend hw --scenario "
      "scenarios/hw-cpu-4rank.yaml --quick --out cal.json");
  cmd->add_option("--backend", opts->backend,
                  "hw (CPU ranks under mpirun) or cuda (cuBLAS BF16 GEMMs on a GPU; NCCL "
                  "all-reduce between GPUs under mpirun)")
      ->check(CLI::IsMember({"hw", "cuda"}))
      ->capture_default_str();
  cmd->add_option("--out", opts->out_path, "Write the profile as JSON to FILE")->type_name("FILE");
  cmd->add_flag("--quick", opts->quick, "Fewer shapes, sizes and repeats (seconds)");
  cmd->add_option("--scenario", opts->scenario,
                  "Also measure the hw executor's own kernels (GEMMs by shape, GELU, softmax, "
                  "optimizer) for this scenario's model and plan")
      ->type_name("FILE")
      ->check(CLI::ExistingFile);
  cmd->add_option("--device", opts->device,
                  "cuda: GPU index (default 0; under mpirun each rank takes its own)")
      ->check(CLI::Range(0, 1023));
  cmd->add_option("--peak-of", opts->peak_of,
                  "cuda: device preset whose BF16 peak the GEMMs are "
                  "compared with")
      ->capture_default_str();
  cmd->add_option("--set", opts->overrides, "Override a scenario field (with --scenario)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  cmd->callback([opts, &ctx] { run_calibrate(*opts, ctx); });
}

}  // namespace parashift::tools
