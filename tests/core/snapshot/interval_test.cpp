#include <doctest/doctest.h>

#include "core/snapshot/interval.hpp"

using namespace parashift::core;

TEST_CASE("Young and Daly intervals for C = 2 s, M = 10000 s") {
  // Young: sqrt(2 * 2 * 10000) = sqrt(40000) = 200 s.
  CHECK(young_interval_s(2, 10000) == doctest::Approx(200.0));
  // Daly: x = C / 2M = 1e-4, sqrt(x) = 0.01;
  // 200 * (1 + 0.01/3 + 1e-4/9) - 2 = 200 * 1.0033444... - 2 = 198.66889 s.
  CHECK(daly_interval_s(2, 10000) == doctest::Approx(198.66889).epsilon(1e-6));
}

TEST_CASE("Daly's interval is the MTBF once a snapshot costs 2 MTBF or more") {
  CHECK(daly_interval_s(30, 10) == doctest::Approx(10.0));
}

TEST_CASE("a free snapshot means snapshot every time") {
  CHECK(young_interval_s(0, 3600) == 0.0);
  CHECK(daly_interval_s(0, 3600) == 0.0);
}

// The cadence counts the interval from commit to commit: commit gap =
// every * iteration + replication <= interval (core/snapshot/interval.hpp).
TEST_CASE("the cadence keeps committed versions at most one interval of work apart") {
  const TimeNs s = kNsPerS;
  // Llama-3 405B on 16K H100: iteration 9.412 s, replication 2.01 s,
  // interval 75.296 s (Daly's 78 s rounded to 8 iterations). Rounding the
  // interval to iterations alone gives 8 x 9.412 = 75.296 s between starts,
  // and up to 75.296 + 2.01 = 77.306 s of work between commits: over. The
  // cadence instead takes floor((75.296 - 2.01) / 9.412) = floor(7.79) = 7
  // iterations: gap 7 x 9.412 + 2.01 = 65.884 + 2.01 = 67.894 s.
  const TimeNs it = 9'412'000'000;
  const TimeNs repl = 2'010'000'000;
  const SnapshotCadence c = snapshot_cadence(8 * it, it, repl);
  CHECK(c.every == 7);
  CHECK(c.commit_gap_ns == 7 * it + repl);
  CHECK(c.commit_gap_ns == 67'894'000'000);
  CHECK(c.feasible);

  // Exactly on the bound is fine: (10 - 2) / 2 = 4 iterations, 4 x 2 + 2 = 10 s.
  const SnapshotCadence exact = snapshot_cadence(10 * s, 2 * s, 2 * s);
  CHECK(exact.every == 4);
  CHECK(exact.commit_gap_ns == 10 * s);
  CHECK(exact.feasible);
}

TEST_CASE("one replication in flight at a time, an interval no cadence meets is infeasible") {
  const TimeNs s = kNsPerS;
  // Replication 2.5 s on 1 s iterations: at least ceil(2.5) = 3 iterations
  // between snapshots. Interval 10 s: floor((10 - 2.5) / 1) = 7 >= 3, gap 9.5 s.
  const SnapshotCadence c = snapshot_cadence(10 * s, s, 2500 * kNsPerMs);
  CHECK(c.every == 7);
  CHECK(c.commit_gap_ns == 9500 * kNsPerMs);
  CHECK(c.feasible);
  // Interval 3 s: floor(0.5) = 0 < 3, so 3 iterations, gap 5.5 s > 3 s.
  const SnapshotCadence tight = snapshot_cadence(3 * s, s, 2500 * kNsPerMs);
  CHECK(tight.every == 3);
  CHECK(tight.commit_gap_ns == 5500 * kNsPerMs);
  CHECK_FALSE(tight.feasible);
  // No replication time (one host): every iteration when the interval is one.
  const SnapshotCadence free = snapshot_cadence(s, s, 0);
  CHECK(free.every == 1);
  CHECK(free.commit_gap_ns == s);
  CHECK(free.feasible);
}
