// `parashift calibrate --backend hw [--out FILE]`: GEMM and collective
// micro-benchmarks on this machine (run under mpirun for the collectives),
// written as a device profile the cost model can load.
#include <cstdio>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "core/input_error.hpp"
#include "hw/calib/calibration.hpp"
#include "tools/cli/command.hpp"
#include "tools/cli/output_file.hpp"

#ifdef PARASHIFT_HAVE_MPI
#include "hw/cpu/mpi_session.hpp"
#endif

namespace parashift::tools {

namespace {

struct CalibrateOptions {
  std::string backend = "hw";
  std::string out_path;
  bool quick = false;
};

std::string fmt(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

void run_calibrate(const CalibrateOptions& opts, CliContext& ctx) {
#ifdef PARASHIFT_HAVE_MPI
  hw::MpiSession mpi;
  auto world = mpi.world();
  const auto profile = hw::measure_calibration(*world, opts.quick);
  if (world->rank() != 0) return;
  ctx.out << "GEMM (fp32, Eigen, slowest of " << profile.ranks << " rank(s) running at once)\n";
  for (const auto& g : profile.gemm)
    ctx.out << "  " << g.m << " x " << g.n << " x " << g.k << "  "
            << fmt("%.2f", g.flops_per_s / 1e9) << " GFLOP/s\n";
  ctx.out << "memory copy  " << fmt("%.2f", profile.memory_Bps / 1e9) << " GB/s per rank\n";
  for (const auto& c : profile.all_reduce)
    ctx.out << "all-reduce " << fmt("%.0f", c.bytes) << " B  " << fmt("%.1f", c.seconds * 1e6)
            << " us  bus " << fmt("%.3f", c.bus_Bps / 1e9) << " GB/s\n";
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
  cmd->add_option("--backend", opts->backend, "hw (the only backend with something to measure)")
      ->check(CLI::IsMember({"hw"}))
      ->capture_default_str();
  cmd->add_option("--out", opts->out_path, "Write the profile as JSON to FILE")->type_name("FILE");
  cmd->add_flag("--quick", opts->quick, "Fewer shapes, sizes and repeats (seconds)");
  cmd->callback([opts, &ctx] { run_calibrate(*opts, ctx); });
}

}  // namespace parashift::tools
