// `policy.plugins` from the command line: the shipped plugin scenario makes
// the example plugin's directive in a simulated run; a plugin built for
// another ABI version is one line and exit status 2.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "cli_harness.hpp"

using parashift::test::run_parashift;

namespace {
const std::string kScenario =
    std::string(PARASHIFT_SOURCE_DIR) + "/scenarios/plugin-speed-split.yaml";
}

TEST_CASE("simulate runs the example plugin and prints its directive") {
  const auto r = run_parashift({"simulate", kScenario});
  REQUIRE(r.status == 0);
  CHECK(r.out.find("policy              straggler, speed_split") != std::string::npos);
  // 96 layers over 8 stages, 12 each; one stage's GPU 2x slower (speeds
  // 1 x 7 and 1/2: sum 7.5). One layer each, then 88 by speed: a fast stage
  // 1 + 88/7.5 = 12.73, the slow one 1 + 44/7.5 = 6.87; floors 12 x 7 + 6 =
  // 90, the 6 left to the largest remainders (0.87, then five of the 0.73s):
  // five stages of 13, two of 12, one of 7, in the stages' order.
  const auto at = r.out.find("repartition [");
  REQUIRE(at != std::string::npos);
  const auto end = r.out.find(']', at);
  REQUIRE(end != std::string::npos);
  std::string list = r.out.substr(at + 13, end - at - 13);
  std::multiset<int> split;
  for (std::size_t pos = 0; pos < list.size();) {
    const std::size_t comma = list.find(',', pos);
    split.insert(std::stoi(list.substr(pos, comma - pos)));
    pos = comma == std::string::npos ? list.size() : comma + 1;
  }
  CHECK(split == std::multiset<int>{7, 12, 12, 13, 13, 13, 13, 13});
  CHECK(r.out.find("layers by stage speed", at) != std::string::npos);
}

TEST_CASE("a plugin of another ABI version is refused with one line, exit 2") {
  const auto r =
      run_parashift({"simulate", kScenario, "--set",
                     std::string("policy.plugins=[") + PARASHIFT_TEST_PLUGIN_ABI_99 + "]"});
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find("policy.plugins[0] (set on the command line): ") != std::string::npos);
  CHECK(r.err.find("plugin ABI version 99; this parashift loads version 1") != std::string::npos);
  CHECK(r.err.find('\n') == r.err.size() - 1);  // one line
}
