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
