#include "hw/calib/calibration.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <fstream>
#include <limits>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/input_error.hpp"
#include "core/input_file.hpp"
#include "hw/calib/collective_calibration.hpp"
#include "hw/cpu/gemm_probe.hpp"
#include "hw/device/host_kernels.hpp"

namespace parashift::hw {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The slowest rank's value: every rank must finish for an iteration to end.
double slowest(Communicator& world, double seconds) {
  world.all_reduce_max(std::span<double>(&seconds, 1));
  return seconds;
}

double measure_memory_Bps(int repeats) {
  std::vector<float> a(std::size_t{1} << 23, 1.0f), b(a.size());  // 32 MiB each
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    std::copy(a.begin(), a.end(), b.begin());
    best = std::min(best, seconds_since(start));
    a[static_cast<std::size_t>(r)] = b[static_cast<std::size_t>(r) + 1];
  }
  return 2.0 * static_cast<double>(a.size() * sizeof(float)) / best;  // read + write
}

}  // namespace

CalibrationProfile measure_calibration(Communicator& world, bool quick) {
  CalibrationProfile p;
  p.ranks = world.size();
  const int repeats = quick ? 2 : 5;
  // Squares for the peak and fall-off, then the synthetic layer's shapes
  // (tokens x hidden x 3h, tokens x h x 4h, seq x seq x head_dim).
  std::vector<std::array<int, 3>> shapes{
      {32, 32, 32}, {64, 64, 64}, {128, 128, 128}, {256, 256, 256}};
  if (!quick) {
    shapes.insert(
        shapes.end(),
        {{512, 512, 512}, {128, 768, 256}, {128, 1024, 256}, {128, 256, 1024}, {128, 128, 64}});
  }
  for (const auto& [m, n, k] : shapes) {
    world.barrier();
    const auto g = measure_cpu_gemm(m, n, k, repeats);
    const double seconds = slowest(world, g.seconds);
    p.gemm.push_back({m, n, k, 2.0 * m * n * static_cast<double>(k) / seconds, false, false});
  }
  p.memory_Bps = measure_memory_Bps(repeats);
  HostKernels host;  // the CPU flavour's buffers: host memory
  p.all_reduce = measure_all_reduce(
      world, host, quick ? (std::size_t{1} << 16) : (std::size_t{1} << 24), repeats);
  return p;
}

nlohmann::json to_json(const CalibrationProfile& p) {
  nlohmann::json gemm = nlohmann::json::array(), coll = nlohmann::json::array();
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& g : p.gemm)
    gemm.push_back({{"m", g.m},
                    {"n", g.n},
                    {"k", g.k},
                    {"flops_per_s", g.flops_per_s},
                    {"a_transposed", g.a_transposed},
                    {"b_transposed", g.b_transposed}});
  for (const auto& c : p.all_reduce)
    coll.push_back(
        {{"bytes", c.bytes}, {"seconds", c.seconds}, {"bus_Bps", c.bus_Bps}, {"group", c.group}});
  for (const auto& k : p.kernels)
    kernels.push_back({{"kernel", k.kernel}, {"ns_per_element", k.ns_per_element}});
  return {{"device", p.device},      {"ranks", p.ranks},           {"gemm", gemm},
          {"all_reduce", coll},      {"memory_Bps", p.memory_Bps}, {"kernels", kernels},
          {"cpu_share", p.cpu_share}};
}

CalibrationProfile profile_from_json(const nlohmann::json& j, const std::string& where) {
  try {
    // A whole number that fits an int (get<int>() of 6.4e11 is undefined behaviour).
    const auto whole = [&where](const nlohmann::json& object, const char* key) {
      const nlohmann::json& v = object.at(key);
      if (!v.is_number_integer() || v.get<std::int64_t>() < 0 ||
          v.get<std::int64_t>() > std::numeric_limits<int>::max()) {
        throw core::InputError(where + ": '" + key + "': expected a whole number in 0.." +
                               std::to_string(std::numeric_limits<int>::max()) + ", found " +
                               v.dump());
      }
      return static_cast<int>(v.get<std::int64_t>());
    };
    CalibrationProfile p;
    p.device = j.at("device").get<std::string>();
    p.ranks = whole(j, "ranks");
    for (const auto& g : j.at("gemm"))
      p.gemm.push_back({whole(g, "m"), whole(g, "n"), whole(g, "k"),
                        g.at("flops_per_s").get<double>(), g.value("a_transposed", false),
                        g.value("b_transposed", false)});
    for (const auto& c : j.at("all_reduce"))
      p.all_reduce.push_back({c.at("bytes").get<double>(), c.at("seconds").get<double>(),
                              c.at("bus_Bps").get<double>(),
                              c.value("group", std::string("job"))});  // older profiles: the job
    p.memory_Bps = j.at("memory_Bps").get<double>();
    p.cpu_share = j.value("cpu_share", 1.0);
    for (const auto& k : j.value("kernels", nlohmann::json::array()))
      p.kernels.push_back(
          {k.at("kernel").get<std::string>(), k.at("ns_per_element").get<double>()});
    return p;
  } catch (const nlohmann::json::exception& e) {
    throw core::InputError(where + ": not a calibration profile (" + e.what() + ")");
  }
}

core::DeviceSpec device_from_profile(const CalibrationProfile& p) {
  if (p.gemm.empty() || !(p.memory_Bps > 0))
    throw core::InputError("calibration profile: expected GEMM points and memory_Bps > 0");
  core::DeviceSpec d;
  d.name = "calibrated " + p.device;
  for (const auto& g : p.gemm)
    d.peak_bf16_flops_per_s = std::max(d.peak_bf16_flops_per_s, g.flops_per_s);
  d.efficiency.gemm_max = 1.0;
  d.efficiency.attention = 1.0;
  d.efficiency.memory = 1.0;
  // eff(d) = d / (d + half) at the smallest dimension d: half = d (1/eff - 1); median of the fits.
  std::vector<double> halves;
  for (const auto& g : p.gemm) {
    const double eff = g.flops_per_s / d.peak_bf16_flops_per_s;
    if (eff < 0.999) halves.push_back(std::min({g.m, g.n, g.k}) * (1.0 / eff - 1.0));
  }
  if (!halves.empty()) {
    std::nth_element(halves.begin(),
                     halves.begin() + static_cast<std::ptrdiff_t>(halves.size() / 2), halves.end());
    d.efficiency.gemm_half_dim = halves[halves.size() / 2];
  } else {
    d.efficiency.gemm_half_dim = 0;
  }
  d.hbm_Bps = p.memory_Bps;
  d.hbm_bytes = 64.0 * 1024 * 1024 * 1024;  // host memory is not what limits the tiny model
  double best_bus = 0;
  for (const auto& c : p.all_reduce) best_bus = std::max(best_bus, c.bus_Bps);
  d.nvlink_Bps = d.nic_Bps = best_bus > 0 ? best_bus : p.memory_Bps;
  d.validate();
  return d;
}

CalibrationProfile load_calibration(const std::filesystem::path& file) {
  const std::string text = core::read_input_file(file, "calibration profile");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw core::InputError(file.string() + ": malformed JSON (" + e.what() + ")");
  }
  return profile_from_json(j, file.string());
}

core::DeviceSpec load_calibrated_device(const std::filesystem::path& file) {
  return device_from_profile(load_calibration(file));
}

}  // namespace parashift::hw
