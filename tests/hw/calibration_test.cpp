#include <doctest/doctest.h>

#include <thread>

#include <nlohmann/json.hpp>

#include "core/input_error.hpp"
#include "hw/calib/calibration.hpp"
#include "hw/calib/collective_calibration.hpp"
#include "hw/calib/predict.hpp"
#include "hw/comm/self_communicator.hpp"
#include "hw/comm/thread_communicator.hpp"
#include "hw/device/host_kernels.hpp"
#include "hw/model/layer_ops.hpp"
#include "tests/hw/hw_test_model.hpp"

using namespace parashift;

TEST_CASE("a calibration profile becomes a DeviceSpec with the measured rates") {
  hw::CalibrationProfile p;
  p.ranks = 4;
  // Peak 40 GFLOP/s at d = 256; 20 GFLOP/s at d = 32: 0.5 = 32 / (32 + half) -> half = 32.
  // 30 GFLOP/s at d = 64: 0.75 = 64 / (64 + half) -> half = 21.3; the median of {32, 21.3} fits
  // (two values: the upper one, 32).
  p.gemm = {{32, 32, 32, 20e9, false, false},
            {64, 64, 64, 30e9, false, false},
            {256, 256, 256, 40e9, false, false}};
  p.all_reduce = {{4096, 1e-5, 0.6e9}, {65536, 5e-5, 2.0e9}};
  p.memory_Bps = 8e9;
  const auto json = hw::to_json(p);
  const auto d = hw::device_from_profile(hw::profile_from_json(json, "x.json"));
  CHECK(d.peak_bf16_flops_per_s == 40e9);
  CHECK(d.efficiency.gemm_max == 1.0);
  CHECK(d.efficiency.gemm_half_dim == doctest::Approx(32.0));
  CHECK(d.hbm_Bps == 8e9);
  CHECK(d.nvlink_Bps == 2.0e9);  // the best bus bandwidth measured
  CHECK_THROWS_AS(hw::profile_from_json(nlohmann::json{{"device", "x"}}, "x.json"),
                  core::InputError);
}

TEST_CASE("calibration on one rank measures GEMMs and memory but no collectives") {
  hw::SelfCommunicator world;
  const auto p = hw::measure_calibration(world, true);
  CHECK(p.ranks == 1);
  CHECK(p.gemm.size() == 4);
  for (const auto& g : p.gemm) CHECK(g.flops_per_s > 0);
  CHECK(p.memory_Bps > 0);
  CHECK(p.all_reduce.empty());
}

TEST_CASE("calibrated all-reduce time: bus bandwidth interpolated log-log, ring factor") {
  hw::CalibrationProfile p;
  p.memory_Bps = 8e9;
  p.all_reduce = {{4096, 1e-5, 0.6e9}, {65536, 5e-5, 2.0e9}};
  // 2 ranks: ring factor 2(n-1)/n = 1. 65536 B at the measured 2 GB/s bus = 32.768 us.
  CHECK(hw::all_reduce_s(p, 65536, 2) == doctest::Approx(32.768e-6));
  // 16384 B is halfway (log) from 4096 to 65536: bus sqrt(0.6e9 x 2e9) = 1.0954e9 B/s
  // -> 14.957 us; 4 ranks multiply by 2 x 3/4 = 1.5 -> 22.44 us.
  CHECK(hw::all_reduce_s(p, 16384, 2) == doctest::Approx(14.957e-6).epsilon(1e-3));
  CHECK(hw::all_reduce_s(p, 16384, 4) == doctest::Approx(22.436e-6).epsilon(1e-3));
  // Never below the smallest measured time: 8 B -> 10 us; one rank: nothing to reduce.
  CHECK(hw::all_reduce_s(p, 8, 2) == doctest::Approx(1e-5));
  CHECK(hw::all_reduce_s(p, 65536, 1) == 0.0);
}

TEST_CASE("a group's own all-reduce points, else the job's") {
  hw::CalibrationProfile p;
  p.memory_Bps = 8e9;
  // Job: 2 GB/s bus; tp groups: 0.5 GB/s (say, across a slower link).
  p.all_reduce = {{4096, 1e-5, 2.0e9, "job"},
                  {65536, 5e-5, 2.0e9, "job"},
                  {4096, 8.192e-6, 0.5e9, "tp"},
                  {65536, 1.31072e-4, 0.5e9, "tp"}};
  // 65536 B on 2 ranks (ring factor 1): tp at 0.5 GB/s = 131.072 us; dp has
  // no points of its own and takes the job's 2 GB/s = 32.768 us.
  CHECK(hw::all_reduce_s(p, 65536, 2, "tp") == doctest::Approx(131.072e-6));
  CHECK(hw::all_reduce_s(p, 65536, 2, "dp") == doctest::Approx(32.768e-6));
  CHECK(hw::all_reduce_s(p, 65536, 2) == doctest::Approx(32.768e-6));
  // The group survives the JSON round trip; a point without one is the job's.
  auto json = hw::to_json(p);
  CHECK(hw::profile_from_json(json, "x.json").all_reduce[2].group == "tp");
  json["all_reduce"][2].erase("group");
  CHECK(hw::profile_from_json(json, "x.json").all_reduce[2].group == "job");
}

TEST_CASE("the plan's tp and dp groups measured at once, the same points on every rank") {
  // tp 2 x dp 2 on four threads: two tp groups and two dp groups of 2 ranks;
  // sizes 4 KiB and 32 KiB each, the slowest rank's time everywhere.
  auto world = hw::make_thread_group(4);
  const auto plan = test::tiny_plan(2, 1, 2);
  std::vector<hw::CollectivePoint> points[4];
  std::vector<std::thread> threads;
  for (int r = 0; r < 4; ++r)
    threads.emplace_back([&, r] {
      hw::HostKernels kernels;
      points[r] = hw::measure_plan_all_reduce(*world[static_cast<std::size_t>(r)], kernels, plan,
                                              std::size_t{1} << 15, 2);
    });
  for (auto& t : threads) t.join();
  REQUIRE(points[0].size() == 4);
  CHECK(points[0][0].group == "tp");
  CHECK(points[0][2].group == "dp");
  CHECK(points[0][1].bytes == 32768.0);
  for (int r = 1; r < 4; ++r)
    for (std::size_t i = 0; i < 4; ++i) CHECK(points[r][i].seconds == points[0][i].seconds);
  // 2 ranks: bus = bytes / seconds (ring factor 1).
  CHECK(points[0][1].bus_Bps == doctest::Approx(32768.0 / points[0][1].seconds));
  // A job of another size than the plan is refused.
  hw::SelfCommunicator one;
  hw::HostKernels kernels;
  CHECK_THROWS_AS(hw::measure_plan_all_reduce(one, kernels, plan, 4096, 1), core::InputError);
}

TEST_CASE("the executor's op list: a layer's forward FLOPs, backward twice forward") {
  // hidden 32, 4 heads, MLP 64, tp 1, seq 8, one sequence: t = 8, d = 8.
  const hw::LayerShape s{32, 4, 64, 1, 8, 1};
  double forward = 0, backward = 0;
  for (const auto& g : hw::layer_forward_ops(s).gemms) forward += g.flops();
  for (const auto& g : hw::layer_backward_ops(s).gemms) backward += g.flops();
  // layer_forward_flops counts the same GEMMs: 2 t h (3h + h + 2f) + 4 t seq h.
  CHECK(forward == doctest::Approx(hw::layer_forward_flops(s)));
  CHECK(backward == doctest::Approx(2.0 * forward));
}
