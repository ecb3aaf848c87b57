// The gradient noise scale (core/convergence/noise_scale.hpp) and the
// convergence model's trace (core/convergence/convergence_model.hpp).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/convergence/convergence_model.hpp"
#include "core/convergence/noise_scale.hpp"
#include "core/input_error.hpp"
#include "tests/temp_dir.hpp"

using namespace parashift::core;

TEST_CASE("two batch sizes' squared norms give the noise scale exactly") {
  // |G|^2 = 4, tr(Sigma) = 800: at b = 8 a replica measures 4 + 800/8 = 104,
  // the reduction over B = 512 measures 4 + 800/512 = 5.5625; B_noise =
  // 800 / 4 = 200, whatever the smoothing.
  NoiseScaleEstimator e(0.9);
  CHECK(e.noise_scale() == 0);
  for (int i = 0; i < 3; ++i) e.add(104, 8, 5.5625, 512);
  CHECK(e.noise_scale() == doctest::Approx(200));
  CHECK(e.observations() == 3);
}

TEST_CASE("from the simulator's noisy norms the estimate lands within 10% of the truth") {
  // 64 replicas of 4 sequences, B_noise 300 sequences, each measured squared
  // norm off by 5% (sd): the smoothed estimate over 400 steps is within 10%.
  NoiseScaleEstimator e(0.95);
  for (int step = 0; step < 400; ++step) {
    const MeasuredNorms m = measured_norms(300, 4, 64, 256, 0.05, 7, step);
    e.add(m.replica_sq_norm, 4, m.global_sq_norm, 256);
  }
  CHECK(e.noise_scale() == doctest::Approx(300).epsilon(0.10));
}

TEST_CASE("goodput is a step's progress over its time") {
  // B = 100 at B_noise 300: a quarter of an infinite batch's step, in 2 s.
  CHECK(step_progress(100, 300) == doctest::Approx(0.25));
  CHECK(goodput(100, 300, 2.0) == doctest::Approx(0.125));
}

TEST_CASE("a noise-scale trace is read, interpolated, and a bad row is named") {
  parashift::test::TempDir dir("noise_trace");
  const auto write = [&](const std::string& text) {
    const std::filesystem::path f = dir.path() / "t.csv";
    std::ofstream(f) << text;
    return f;
  };
  const NoiseScaleTrace t = read_noise_scale_trace(
      write("progress,noise_scale_tokens\n0,100\n0.5,300\n1,400\n"), "t.csv");
  // Halfway between 0 and 0.5: (100 + 300) / 2; past the end: the last row.
  CHECK(t.at(0.25) == doctest::Approx(200));
  CHECK(t.at(0.75) == doctest::Approx(350));
  CHECK(t.at(2.0) == doctest::Approx(400));
  const auto error = [&](const std::string& text) -> std::string {
    try {
      read_noise_scale_trace(write(text), "t.csv");
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  };
  CHECK(error("progress,noise_scale_tokens\n0,100\n0.5,abc\n") ==
        "t.csv:3: noise_scale_tokens: expected a number, found 'abc'");
  CHECK(error("progress,noise\n0,100\n1,2\n") ==
        "t.csv:1: expected the header 'progress,noise_scale_tokens'");
  CHECK(error("progress,noise_scale_tokens\n0.5,100\n0.2,300\n") ==
        "t.csv:3: progress: expected rows in increasing order of progress");
  CHECK(error("progress,noise_scale_tokens\n0,100\n1,0\n") ==
        "t.csv:3: noise_scale_tokens: expected a number > 0");
  CHECK(error("progress,noise_scale_tokens\n0,100\n") == "t.csv:1: expected at least 2 rows");
  CHECK(error("progress,noise_scale_tokens\n0,100,3\n1,2\n") ==
        "t.csv:2: expected 2 fields (progress, noise_scale_tokens), found 3");
}
