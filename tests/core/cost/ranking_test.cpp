#include <doctest/doctest.h>

#include <cmath>

#include "core/validation/ranking.hpp"

using namespace parashift::core;

TEST_CASE("Spearman's rho: same order 1, reversed -1, ties averaged") {
  CHECK(spearman_rho({1, 2, 3, 4}, {10, 20, 30, 40}) == doctest::Approx(1.0));
  CHECK(spearman_rho({1, 2, 3, 4}, {4, 3, 2, 1}) == doctest::Approx(-1.0));
  // Ranks a = 1 2 3 4, b = 1 2.5 2.5 4 (the tie averaged): cov = 4.5,
  // var_a = 5, var_b = 4.5: rho = 4.5 / sqrt(22.5) = 0.9487.
  CHECK(spearman_rho({1, 2, 3, 4}, {1, 5, 5, 9}) == doctest::Approx(4.5 / std::sqrt(22.5)));
  CHECK(spearman_rho({1, 1, 1}, {1, 2, 3}) == 0.0);
}

namespace {

PublishedRun run(const std::string& id, const std::string& group, double measured_s) {
  PublishedRun r;
  r.row_id = id;
  r.location = "g.csv:1 (" + id + ")";
  r.group = group;
  r.gpus = 8;
  r.seq_len = 1000;
  r.plan.global_batch = 8;
  r.measured_s = measured_s;
  return r;
}

}  // namespace

TEST_CASE("plan groups: rank correlation and the loss from following the model's pick") {
  const std::vector<PublishedRun> runs = {run("A", "g", 1.0), run("B", "g", 1.25),
                                          run("C", "g", 2.0), run("X", "", 1.0),
                                          run("D", "h", 1.0), run("E", "h", 1.0)};
  // Group g: measured A fastest; the model predicts B fastest and orders B, A, C.
  const std::vector<double> predicted = {1.1, 1.0, 3.0, 9.0, 1.0, 1.0};
  const auto groups = rank_plan_groups(runs, predicted);
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].group == "g");
  CHECK(groups[0].plans == 3);
  // Throughput is 1/time: measured ranks A3 B2 C1, predicted A2 B3 C1:
  // d^2 = 1 + 1 + 0 = 2, rho = 1 - 6*2/(3*8) = 0.5.
  CHECK(groups[0].spearman == doctest::Approx(0.5));
  // Following the pick (B, 1.25 s) instead of A (1.0 s): 1 - 1/1.25 = 20 % lost.
  CHECK(groups[0].picked_row == "B");
  CHECK(groups[0].best_row == "A");
  CHECK(groups[0].pick_loss_pct == doctest::Approx(20.0));
  CHECK(groups[1].pick_loss_pct == doctest::Approx(0.0));
  CHECK(single_row_groups(runs).empty());
  const std::vector<PublishedRun> lonely = {run("A", "g", 1.0), run("Z", "solo", 1.0),
                                            run("B", "g", 1.0)};
  const auto bad = single_row_groups(lonely);
  REQUIRE(bad.size() == 1);
  CHECK(bad[0] ==
        "g.csv:1 (Z): group 'solo' has one row; a ranking group needs at least two plans");
}
