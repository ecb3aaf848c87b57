// core/cost/device_groups.hpp: another device type as a compute factor on
// the reference device, per plan.
#include <doctest/doctest.h>

#include "core/cost/device_groups.hpp"
#include "core/cost/work_profile.hpp"
#include "core/input_error.hpp"

using namespace parashift::core;

namespace {

ModelSpec llama70b() {
  // Llama-3 70B's shape (scenarios/models): 80 layers, hidden 8192, 64
  // heads, 8 KV heads, SwiGLU 28672, vocabulary 128256, untied.
  return {"llama3-70b", 80, 8192, 64, 8, 28672, FfnKind::SwiGlu, 128256, false};
}

}  // namespace

TEST_CASE("an A100 layer takes between the HBM and the peak-FLOP ratio of an H100's") {
  const DeviceSpec h100 = device_preset("h100-sxm-80gb");
  const DeviceSpec a100 = device_preset("a100-80gb");
  ParallelPlan plan;
  plan.tp = 4;
  plan.dp = 8;
  plan.global_batch = 64;
  plan.sequence_parallel = true;
  const double f = compute_factor(llama70b(), a100, h100, plan, 8192, CostOptions{});
  // Every kernel is bound by one of the two rates: 989 / 312 = 3.17x the
  // FLOP/s, 3.35 / 2.04 = 1.64x the HBM bandwidth; the presets' efficiency
  // ceilings differ by device generation, so allow 10% beyond either.
  CHECK(f > 0.9 * 3.35 / 2.039);
  CHECK(f < 1.1 * 989.0 / 312.0);
  // The reference itself: 1; the factor is the ratio of the two profiles'
  // forward + backward + recompute of one layer.
  CHECK(compute_factor(llama70b(), h100, h100, plan, 8192, CostOptions{}) == 1.0);
  const WorkProfile on_a = work_profile(llama70b(), a100, plan, 8192, CostOptions{});
  const WorkProfile on_h = work_profile(llama70b(), h100, plan, 8192, CostOptions{});
  CHECK(f == doctest::Approx(static_cast<double>(on_a.layer.forward_ns + on_a.layer.backward_ns) /
                             static_cast<double>(on_h.layer.forward_ns + on_h.layer.backward_ns)));
}

TEST_CASE("group factors list the other device's GPUs only, and HBM is the least of all") {
  const DeviceSpec h100 = device_preset("h100-sxm-80gb");
  DeviceSpec a40 = device_preset("a100-40gb");
  const std::vector<DeviceGroup> groups = {{h100, 0, 16}, {a40, 16, 8}};
  ParallelPlan plan;
  plan.tp = 8;
  plan.dp = 3;
  plan.global_batch = 24;
  const auto factors = group_factors(groups, llama70b(), h100, plan, 4096, CostOptions{});
  REQUIRE(factors.size() == 8);
  CHECK(factors.front().gpu == 16);
  CHECK(factors.back().gpu == 23);
  CHECK(factors.front().factor > 1.5);
  CHECK(least_hbm_bytes(groups, h100) == a40.hbm_bytes);
  CHECK(least_hbm_bytes({}, h100) == h100.hbm_bytes);
}
