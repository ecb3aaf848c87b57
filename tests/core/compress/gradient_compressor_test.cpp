// GradientCompressor on real buffers, four ranks on threads.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <mutex>

#include "core/compress/gradient_compressor.hpp"
#include "tests/core/compress/thread_group.hpp"

using namespace parashift;
using core::GradientCompressor;
using core::parse_compression;

namespace {

constexpr int kRanks = 4;

// Deterministic values in [-1, 1) per (rank, iteration, index).
float value(int rank, int iteration, std::size_t i) {
  std::uint64_t x =
      (static_cast<std::uint64_t>(rank) << 48) ^ (static_cast<std::uint64_t>(iteration) << 32) ^ i;
  x = (x ^ (x >> 33)) * 0xff51afd7ed558ccdULL;
  x = (x ^ (x >> 33)) * 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return static_cast<float>(static_cast<double>(x >> 11) / 4503599627370496.0 - 1.0);
}

std::vector<float> gradient(int rank, int iteration, std::size_t n) {
  std::vector<float> g(n);
  for (std::size_t i = 0; i < n; ++i) g[i] = value(rank, iteration, i);
  return g;
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, std::fabs(static_cast<double>(a[i]) - b[i]));
  return worst;
}

}  // namespace

TEST_CASE(
    "error feedback loses nothing: the estimates plus what is held back sum to the gradients") {
  // Per rank, residual_t = (g_t + residual_{t-1}) - sent_t, and the estimate
  // is the mean of what was sent (int8 also holds back its re-quantisation
  // error on each shard's owner). So over T iterations
  //   sum_t estimate_t + mean_w residual_w,T (+ shard residuals)
  //     = sum_t mean_w g_w,t
  // exactly in real arithmetic; in fp32 within a few ulps of the sums' size
  // (|g| < 1, T = 8, so sums stay below 8: 1e-4 is ~100 ulps).
  const int rows = 48;
  const int cols = 40;
  const std::size_t n = static_cast<std::size_t>(rows) * cols;
  const int iterations = 8;
  for (const char* text : {"powersgd:2", "topk:0.05", "int8:16"}) {
    CAPTURE(text);
    std::vector<float> estimates(n, 0.0f);
    std::vector<float> truth(n, 0.0f);
    std::vector<float> held(n, 0.0f);
    std::mutex lock;
    test::run_group(kRanks, [&](int rank, test::ThreadGroup& group) {
      GradientCompressor c(parse_compression(text), 7);
      std::vector<float> sum(n, 0.0f);
      for (int t = 0; t < iterations; ++t) {
        auto g = gradient(rank, t, n);
        {
          std::lock_guard guard(lock);  // the truth, outside the compressor
          for (std::size_t i = 0; i < n; ++i) truth[i] += g[i] / kRanks;
        }
        c.average(0, g, rows, cols, group);
        for (std::size_t i = 0; i < n; ++i) sum[i] += g[i];
      }
      const core::CompressorState& s = c.states().at(0);
      std::lock_guard guard(lock);
      if (rank == 0) estimates = sum;
      for (std::size_t i = 0; i < n; ++i) held[i] += s.residual[i] / kRanks;
      // Shard residuals: rank r owns elements [r * shard, (r + 1) * shard).
      for (std::size_t i = 0; i < s.shard_residual.size(); ++i) {
        const std::size_t at = static_cast<std::size_t>(rank) * s.shard_residual.size() + i;
        if (at < n) held[at] += s.shard_residual[i];
      }
    });
    for (std::size_t i = 0; i < n; ++i) estimates[i] += held[i];
    CHECK(max_abs_diff(estimates, truth) < 1e-4);
    // And something was held back: the compressors are lossy each step.
    double held_norm = 0;
    for (float h : held) held_norm += std::fabs(h);
    CHECK(held_norm > 1e-3);
  }
}

TEST_CASE("every rank ends with the same bits, and the bytes sent match sync_calls") {
  // 64 x 32 = 2,048 elements: int8:16 pads nothing (4 ranks x 512).
  const int rows = 64;
  const int cols = 32;
  const std::size_t n = static_cast<std::size_t>(rows) * cols;
  const std::array<core::MatrixShape, 1> shape{{{rows, cols}}};
  for (const char* text : {"none", "powersgd:3", "topk:0.1", "int8:16"}) {
    CAPTURE(text);
    const auto spec = parse_compression(text);
    std::array<std::vector<float>, kRanks> out;
    std::array<double, kRanks> sent{};
    test::run_group(kRanks, [&](int rank, test::ThreadGroup& group) {
      GradientCompressor c(spec, 11);
      auto g = gradient(rank, 0, n);
      sent[static_cast<std::size_t>(rank)] = c.average(0, g, rows, cols, group);
      out[static_cast<std::size_t>(rank)] = g;
    });
    for (int r = 1; r < kRanks; ++r) CHECK(out[static_cast<std::size_t>(r)] == out[0]);
    double expected = 0;
    for (const auto& call : core::sync_calls(spec, shape, 4.0, kRanks)) expected += call.bytes;
    CHECK(sent[0] == expected);
  }
}

TEST_CASE("uncompressed averaging is the mean") {
  const std::size_t n = 100;
  std::vector<float> mean(n, 0.0f);
  for (int r = 0; r < kRanks; ++r)
    for (std::size_t i = 0; i < n; ++i) mean[i] += value(r, 0, i);
  for (float& m : mean) m /= kRanks;
  test::run_group(kRanks, [&](int rank, test::ThreadGroup& group) {
    GradientCompressor c(parse_compression("none"), 1);
    auto g = gradient(rank, 0, n);
    c.average(0, g, 10, 10, group);
    if (rank == 0) CHECK(max_abs_diff(g, mean) < 1e-6);
  });
}

TEST_CASE("PowerSGD is exact on gradients that share a rank-r column space") {
  // M_w = U A_w with U 30 x 2: P = sum_w M_w Q spans U, so P P^T (mean M)
  // = mean M, and the first step already returns the mean (fp32: 1e-5).
  const int rows = 30;
  const int cols = 20;
  const int r = 2;
  auto u = [](int i, int k) { return value(9, k, static_cast<std::size_t>(i)); };
  std::vector<std::vector<float>> m(kRanks, std::vector<float>(rows * cols));
  std::vector<float> mean(rows * cols, 0.0f);
  for (int w = 0; w < kRanks; ++w)
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) {
        float s = 0;
        for (int k = 0; k < r; ++k) s += u(i, k) * value(w, k, static_cast<std::size_t>(j));
        m[w][i * cols + j] = s;
        mean[i * cols + j] += s / kRanks;
      }
  test::run_group(kRanks, [&](int rank, test::ThreadGroup& group) {
    GradientCompressor c(parse_compression("powersgd:2"), 3);
    auto g = m[static_cast<std::size_t>(rank)];
    c.average(0, g, rows, cols, group);
    // (Each rank's residual is its own M_w less the shared estimate; their
    // mean, zero here, is what the error-feedback test above checks.)
    if (rank == 0) CHECK(max_abs_diff(g, mean) < 1e-5);
  });
}

TEST_CASE("PowerSGD of rank 1 on a full-rank gradient is not the mean (the test above can fail)") {
  const int rows = 16;
  const int cols = 16;
  std::vector<float> mean(rows * cols, 0.0f);
  for (int w = 0; w < kRanks; ++w)
    for (std::size_t i = 0; i < mean.size(); ++i) mean[i] += value(w, 0, i) / kRanks;
  test::run_group(kRanks, [&](int rank, test::ThreadGroup& group) {
    GradientCompressor c(parse_compression("powersgd:1"), 3);
    auto g = gradient(rank, 0, mean.size());
    c.average(0, g, rows, cols, group);
    if (rank == 0) CHECK(max_abs_diff(g, mean) > 0.05);
  });
}

TEST_CASE("top-k is exact when each rank's non-zeros fit in k") {
  // 200 entries, topk:0.05 keeps 10; rank w sets entries 10w .. 10w+9.
  const std::size_t n = 200;
  test::run_group(kRanks, [&](int rank, test::ThreadGroup& group) {
    GradientCompressor c(parse_compression("topk:0.05"), 1);
    std::vector<float> g(n, 0.0f);
    for (std::size_t i = 0; i < 10; ++i)
      g[10 * static_cast<std::size_t>(rank) + i] = 1.0f + static_cast<float>(i);
    c.average(0, g, 20, 10, group);
    // Entry 10w + i holds (1 + i) / 4 from rank w alone.
    for (std::size_t i = 0; i < n; ++i) {
      const float want = i < 40 ? (1.0f + static_cast<float>(i % 10)) / kRanks : 0.0f;
      CHECK(g[i] == want);
    }
    for (float e : c.states().at(0).residual) CHECK(e == 0.0f);
  });
}

TEST_CASE("int8 quantisation keeps each value within half a step of its block's scale") {
  // Scale = max |x| / 127; rounding to the nearest code loses at most scale / 2.
  const std::size_t n = 64;
  const int block = 16;
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = value(1, 1, i) * static_cast<float>(1 + i / 16);
  std::vector<float> codes(n / 4), scales(n / block), back(n);
  core::int8_quantise(x, block, codes, scales, back);
  std::vector<float> again(n, 0.0f);
  core::int8_add_dequantised(codes, scales, block, again);
  CHECK(again == back);
  for (std::size_t i = 0; i < n; ++i) {
    const float scale = scales[i / block];
    CHECK(std::fabs(x[i] - back[i]) <= scale / 2 * (1 + 1e-6f));
  }
  for (int b = 0; b < 4; ++b) {
    float peak = 0;
    for (int i = 0; i < block; ++i) peak = std::max(peak, std::fabs(x[b * block + i]));
    CHECK(scales[static_cast<std::size_t>(b)] == peak / 127.0f);
  }
}
