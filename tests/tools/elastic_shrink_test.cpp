// The elastic supervisor's shrink and the ranks' --node-ids
// (tools/cli/elastic_shrink.hpp).
#include <doctest/doctest.h>

#include "core/input_error.hpp"
#include "tools/cli/elastic_shrink.hpp"

using namespace parashift;

TEST_CASE("--node-ids names one node per group of ranks, each once") {
  // 4 ranks, 2 a node: two node numbers.
  CHECK(tools::parse_node_ids("0,2", 4, 2) == std::vector<int>{0, 2});
  CHECK(tools::parse_node_ids("7", 2, 2) == std::vector<int>{7});
  CHECK(tools::node_ids_text({0, 2, 3}) == "0,2,3");
  const char* expected =
      "--node-ids: expected 2 distinct comma-separated node numbers >= 0 (one per 2 ranks), found ";
  for (const char* bad : {"0", "0,1,2", "0,0", "0,-1", "a,1", "0,,1", "0,1,", ""}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH_AS(tools::parse_node_ids(bad, 4, 2),
                         doctest::Contains((std::string(expected) + "'" + bad + "'").c_str()),
                         core::InputError);
  }
}

TEST_CASE("a shrink keeps tp, pp and cp and drops the replicas that do not fit") {
  core::ParallelPlan plan;
  plan.tp = 2;
  plan.pp = 2;
  plan.dp = 4;
  plan.global_batch = 32;  // 8 a replica
  // 16 ranks on 4 nodes of 4; one node lost: 12 ranks, 3 replicas of 4,
  // 24 sequences (8 a replica, as before).
  auto fits = tools::shrink_to_fit(plan, 12, 4);
  CHECK(fits.dp == 3);
  CHECK(fits.global_batch == 24);
  CHECK(fits.tp == 2);
  CHECK(fits.pp == 2);
  // Nodes of 8: 12 ranks hold 3 replicas but not in whole nodes (12 is no
  // multiple of 8): 2 replicas, 16 sequences.
  fits = tools::shrink_to_fit(plan, 12, 8);
  CHECK(fits.dp == 2);
  CHECK(fits.global_batch == 16);
  // 3 ranks hold no replica of 4.
  CHECK(tools::shrink_to_fit(plan, 3, 1).dp == 0);
}
