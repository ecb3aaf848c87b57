// core/controller/group_name.hpp: the coordinates in a group's name.
#include <doctest/doctest.h>

#include "core/controller/group_name.hpp"

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
