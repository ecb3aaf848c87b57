#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "core/input_error.hpp"
#include "hw/calib/calibration.hpp"
#include "hw/comm/self_communicator.hpp"

using namespace parashift;

TEST_CASE("a calibration profile becomes a DeviceSpec with the measured rates") {
  hw::CalibrationProfile p;
  p.ranks = 4;
  // Peak 40 GFLOP/s at d = 256; 20 GFLOP/s at d = 32: 0.5 = 32 / (32 + half) -> half = 32.
  // 30 GFLOP/s at d = 64: 0.75 = 64 / (64 + half) -> half = 21.3; the median of {32, 21.3} fits
  // (two values: the upper one, 32).
  p.gemm = {{32, 32, 32, 20e9}, {64, 64, 64, 30e9}, {256, 256, 256, 40e9}};
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
