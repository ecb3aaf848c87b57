#include "core/cost/device_groups.hpp"

#include <algorithm>

#include "core/cost/work_profile.hpp"

namespace parashift::core {
namespace {

double layer_ns(const WorkProfile& p) {
  return static_cast<double>(p.layer.forward_ns + p.layer.backward_ns + p.layer.recompute_ns);
}

}  // namespace

double compute_factor(const ModelSpec& model, const DeviceSpec& on, const DeviceSpec& reference,
                      const ParallelPlan& plan, int seq_len, const CostOptions& options) {
  const double base = layer_ns(work_profile(model, reference, plan, seq_len, options));
  return base > 0 ? layer_ns(work_profile(model, on, plan, seq_len, options)) / base : 1.0;
}

std::vector<GpuFactor> group_factors(const std::vector<DeviceGroup>& groups, const ModelSpec& model,
                                     const DeviceSpec& reference, const ParallelPlan& plan,
                                     int seq_len, const CostOptions& options) {
  std::vector<GpuFactor> out;
  for (const DeviceGroup& g : groups) {
    if (g.device.name == reference.name) continue;
    const double f = compute_factor(model, g.device, reference, plan, seq_len, options);
    if (f == 1.0) continue;
    for (int k = 0; k < g.gpus; ++k) out.push_back({g.first_gpu + k, f});
  }
  std::sort(out.begin(), out.end(),
            [](const GpuFactor& a, const GpuFactor& b) { return a.gpu < b.gpu; });
  return out;
}

double least_hbm_bytes(const std::vector<DeviceGroup>& groups, const DeviceSpec& reference) {
  double least = reference.hbm_bytes;
  for (const DeviceGroup& g : groups) least = std::min(least, g.device.hbm_bytes);
  return least;
}

std::string describe_devices(const std::vector<DeviceGroup>& groups, const DeviceSpec& device,
                             int gpus) {
  if (groups.empty()) return std::to_string(gpus) + " x " + device.name;
  std::string out;
  for (const DeviceGroup& g : groups) {
    if (!out.empty()) out += " + ";
    out += std::to_string(g.gpus) + " x " + g.device.name;
  }
  return out;
}

}  // namespace parashift::core
