#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "core/snapshot/ettr_model.hpp"

using namespace parashift;

namespace {

// One interruption every 3 h over the job (the 16K campaign's rate), 30 min
// checkpoints written in 6 s, 10 min down per interruption.
core::CheckpointRestart every_3h() {
  return {1.0 / 10800, 1800, 6, 600};
}

// The model played out: Poisson interruptions; each restarts the job (and
// restarts a restart in progress), which redoes the work since its last
// checkpoint. Returns saved work over wall time.
double played_ettr(const core::CheckpointRestart& in, double wall_s, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> gap(in.rate_per_s);
  const double cycle = in.interval_s + in.write_s;
  double t = 0, saved = 0;
  while (t < wall_s) {
    const double x = std::min(gap(rng), wall_s - t);
    if (x > in.restart_s) saved += in.interval_s * std::floor((x - in.restart_s) / cycle);
    t += x;
  }
  return saved / wall_s;
}

}  // namespace

TEST_CASE("ETTR closed forms: Kokolis et al.'s first order and the exact renewal value") {
  const core::CheckpointRestart in = every_3h();
  // First order: 1 - (600 + 900) / 10800 = 0.861111, over 1 + 6/1800:
  // 0.858250.
  CHECK(core::kokolis_ettr(in) == doctest::Approx(0.858250).epsilon(1e-5));
  // Exact: (1800/10800) e^(-600/10800) / (e^(1806/10800) - 1)
  // = 0.166667 x 0.945959 / 0.182017 = 0.866183.
  CHECK(core::renewal_ettr(in) == doctest::Approx(0.866183).epsilon(1e-5));
  // No interruptions: only the writes cost, 1800 / 1806, in both.
  core::CheckpointRestart none = in;
  none.rate_per_s = 0;
  CHECK(core::kokolis_ettr(none) == doctest::Approx(1800.0 / 1806));
  CHECK(core::renewal_ettr(none) == doctest::Approx(1800.0 / 1806));
  // The first order is the exact value's first order: 0.8 points apart at
  // this rate, under 0.01 points at a tenth of it (second-order terms).
  core::CheckpointRestart rarer = in;
  rarer.rate_per_s /= 10;
  CHECK(core::renewal_ettr(in) - core::kokolis_ettr(in) > 0.005);
  CHECK(std::abs(core::renewal_ettr(rarer) - core::kokolis_ettr(rarer)) < 1e-4);
  // Interruptions faster than restarts: the first order would go negative.
  core::CheckpointRestart storm = in;
  storm.rate_per_s = 1.0 / 300;
  CHECK(core::kokolis_ettr(storm) == 0.0);
  CHECK(core::renewal_ettr(storm) > 0.0);
  CHECK(core::renewal_ettr(storm) < 0.05);
}

TEST_CASE("the exact ETTR is what the model gives when played out") {
  // 2e8 s is about 18,500 interruptions; a gap saves 0..n cycles, so the
  // ratio's standard error is about 0.1 point: 3 of them is 0.003.
  const core::CheckpointRestart in = every_3h();
  CHECK(played_ettr(in, 2e8, 1) == doctest::Approx(core::renewal_ettr(in)).epsilon(0.003));
  core::CheckpointRestart often = in;
  often.rate_per_s = 1.0 / 3600;  // one an hour: 0.5 of an interval between them
  CHECK(played_ettr(often, 2e8, 2) == doctest::Approx(core::renewal_ettr(often)).epsilon(0.006));
}
