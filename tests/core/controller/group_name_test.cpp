// core/controller/group_name.hpp: the coordinates in a group's name;
// seconds_text.hpp: durations in the decision log.
#include <doctest/doctest.h>

#include "core/controller/group_name.hpp"
#include "core/controller/seconds_text.hpp"

using parashift::core::parse_group;

TEST_CASE("a group name gives its stage and replica, or -1 for what it lacks") {
  CHECK(parse_group("tp[stage 3, replica 12]", "tp").stage == 3);
  CHECK(parse_group("tp[stage 3, replica 12]", "tp").replica == 12);
  CHECK(parse_group("tp[stage 3, replica 12, cp 1]", "tp").replica == 12);
  CHECK(parse_group("dp[stage 2, cp 1]", "dp").stage == 2);
  CHECK(parse_group("dp[stage 2, cp 1]", "dp").replica == -1);
  // Another prefix, a malformed number, a name cut short: nothing read.
  CHECK(parse_group("dp[stage 2]", "tp").stage == -1);
  CHECK(parse_group("tp[stage x, replica 1]", "tp").stage == -1);
  CHECK(parse_group("tp[stage 4, replica ]", "tp").replica == -1);
  CHECK(parse_group("tp[", "tp").stage == -1);
}

TEST_CASE("the decision log writes durations with at least three significant digits") {
  using parashift::core::seconds_text;
  CHECK(seconds_text(12.3456) == "12.346 s");
  CHECK(seconds_text(0.839) == "0.839 s");  // from 0.1 s: seconds, three digits
  // An executor's iterations: 3.349 ms and 6.055 ms differ in the log.
  CHECK(seconds_text(0.003349) == "3.349 ms");
  CHECK(seconds_text(0.0999) == "99.900 ms");
  CHECK(seconds_text(12.5e-6) == "12.500 us");
  CHECK(seconds_text(0) == "0.000 s");
  CHECK(seconds_text(-0.002) == "-2.000 ms");  // a negative gain keeps its sign
}
