// Drawn failures (sim/faults/failure_events): rack failures and repeat offenders.
#include <doctest/doctest.h>

#include <map>
#include <vector>

#include "sim/faults/failure_events.hpp"

using namespace parashift;
using core::FailureKind;

namespace {

constexpr double kHourS = 3600.0;

core::FaultConfig config_of(double gpu_mtbf_hours, double rack_mtbf_hours, double repeat_factor) {
  core::FaultConfig c;
  c.rates.gpu_mtbf_hours = gpu_mtbf_hours;
  c.rates.rack_mtbf_hours = rack_mtbf_hours;
  c.rates.repeat_factor = repeat_factor;
  return c;
}

// Failures that hit a component which had already failed before.
int repeats_of(const std::vector<sim::FailureEvent>& failures) {
  std::map<int, int> seen;
  int repeats = 0;
  for (const auto& f : failures) repeats += seen[f.target]++ > 0 ? 1 : 0;
  return repeats;
}

}  // namespace

TEST_CASE("rack failures are drawn at racks / MTBF, each naming a rack") {
  sim::FailureTargets targets;
  targets.racks = 40;
  // 40 racks at 100 h each over 5,000 h: 40 x 5,000 / 100 = 2,000 expected
  // (Poisson: sigma 45, so 10% is over 4 sigma).
  const auto failures =
      sim::draw_failures(config_of(0, 100, 1), targets, 3, core::seconds_to_ns(5000 * kHourS));
  CHECK(static_cast<double>(failures.size()) == doctest::Approx(2000).epsilon(0.10));
  for (const auto& f : failures) {
    CHECK(f.kind == FailureKind::Rack);
    CHECK(f.target >= 0);
    CHECK(f.target < 40);
  }
}

TEST_CASE("repeat offenders: a failed GPU fails again at repeat_factor times its rate") {
  sim::FailureTargets targets;
  targets.gpus = 1000;
  // N = 1,000 GPUs at MTBF 10,000 h over T = 1,000 h: first failures arrive
  // at about N / MTBF = 0.1 per hour, 100 in all (T / MTBF = 0.1).
  // Independent (m = 1): repeats only by chance, about 100^2 / (2 N) = 5.
  // m = 50: each failed GPU adds (m - 1) / MTBF, so repeats come at
  // (m - 1) / MTBF x n(t) with n(t) ~ (N / MTBF) t failed GPUs:
  // E = (m - 1) N (T / MTBF)^2 / 2 = 49 x 1,000 x 0.01 / 2 = 245 (a bit
  // less, since repeats do not add offenders and first failures slow as
  // GPUs are used up: under 1%). Means over 20 seeds.
  const core::TimeNs horizon = core::seconds_to_ns(1000 * kHourS);
  double independent = 0, offenders = 0, total_independent = 0;
  constexpr int kSeeds = 20;
  for (int seed = 0; seed < kSeeds; ++seed) {
    const auto a = sim::draw_failures(config_of(10000, 0, 1), targets, seed, horizon);
    const auto b = sim::draw_failures(config_of(10000, 0, 50), targets, seed, horizon);
    independent += repeats_of(a);
    total_independent += static_cast<double>(a.size());
    offenders += repeats_of(b);
  }
  CHECK(total_independent / kSeeds == doctest::Approx(100).epsilon(0.10));
  CHECK(independent / kSeeds < 12);
  CHECK(offenders / kSeeds == doctest::Approx(245).epsilon(0.15));
}

TEST_CASE("repeat_factor 1 draws exactly the independent failures, and a seed repeats") {
  sim::FailureTargets targets;
  targets.gpus = 64;
  targets.hosts = 8;
  core::FaultConfig c = config_of(500, 0, 1);
  c.rates.node_mtbf_hours = 800;
  const core::TimeNs horizon = core::seconds_to_ns(2000 * kHourS);
  const auto a = sim::draw_failures(c, targets, 11, horizon);
  const auto b = sim::draw_failures(c, targets, 11, horizon);
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].at_ns == b[i].at_ns);
    CHECK(a[i].target == b[i].target);
  }
  // Rack failures with no racks to hit draw nothing and leave the rest alone.
  c.rates.rack_mtbf_hours = 100;
  const auto with_racks = sim::draw_failures(c, targets, 11, horizon);
  CHECK(with_racks.size() == a.size());
}
