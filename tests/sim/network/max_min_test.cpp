// Progressive filling on problems small enough to solve by hand (the style of
// SimGrid's teshsuite/surf/maxmin_bench and lmm_usage tests).
#include <doctest/doctest.h>

#include <vector>

#include "sim/network/max_min.hpp"

using namespace parashift;

namespace {
std::vector<double> solve(const sim::MaxMinProblem& p) {
  std::vector<double> rates;
  sim::MaxMinScratch scratch;
  sim::solve_max_min(p, rates, scratch);
  return rates;
}
}  // namespace

TEST_CASE("max-min: flows on one link share it equally") {
  sim::MaxMinProblem p;
  const int l = p.add_link(90);
  for (int i = 0; i < 3; ++i) p.add_flow(std::vector<int>{l});
  // 90 / 3 flows = 30 each.
  CHECK(solve(p) == std::vector<double>{30, 30, 30});
}

TEST_CASE("max-min: a flow limited elsewhere leaves the rest to the others") {
  sim::MaxMinProblem p;
  const int narrow = p.add_link(1);
  const int wide = p.add_link(10);
  p.add_flow(std::vector<int>{narrow, wide});  // F0
  p.add_flow(std::vector<int>{narrow});        // F1
  p.add_flow(std::vector<int>{wide});          // F2
  // narrow: 1 / 2 = 0.5 is the smallest share -> F0 = F1 = 0.5 (frozen);
  // wide then has 10 - 0.5 = 9.5 for F2 alone.
  CHECK(solve(p) == std::vector<double>{0.5, 0.5, 9.5});
}

TEST_CASE("max-min: parking lot") {
  // Three links of 1 in a line; a long flow crosses all, one short flow per link.
  sim::MaxMinProblem p;
  const std::vector<int> line{p.add_link(1), p.add_link(1), p.add_link(1)};
  p.add_flow(line);
  for (const int l : line) p.add_flow(std::vector<int>{l});
  // Every link: 1 / 2 flows; all shares tie at 0.5, so every flow gets 0.5.
  CHECK(solve(p) == std::vector<double>{0.5, 0.5, 0.5, 0.5});
}

TEST_CASE("max-min: two levels of bottleneck") {
  sim::MaxMinProblem p;
  const int a = p.add_link(12);        // F0, F1, F2
  const int b = p.add_link(4);         // F2, F3
  const int c = p.add_link(30);        // F0, F4
  p.add_flow(std::vector<int>{a, c});  // F0
  p.add_flow(std::vector<int>{a});     // F1
  p.add_flow(std::vector<int>{a, b});  // F2
  p.add_flow(std::vector<int>{b});     // F3
  p.add_flow(std::vector<int>{c});     // F4
  // Shares: a 12/3 = 4, b 4/2 = 2, c 30/2 = 15. b first: F2 = F3 = 2.
  // a: (12 - 2) / 2 = 5 -> F0 = F1 = 5. c: 30 - 5 = 25 -> F4 = 25.
  CHECK(solve(p) == std::vector<double>{5, 5, 2, 2, 25});
}

TEST_CASE("max-min: a zero-capacity link stalls its flows only") {
  sim::MaxMinProblem p;
  const int down = p.add_link(0);
  const int up = p.add_link(10);
  p.add_flow(std::vector<int>{down, up});
  p.add_flow(std::vector<int>{up});
  // down: 0 / 1 -> F0 = 0; up keeps 10 for F1.
  CHECK(solve(p) == std::vector<double>{0, 10});
}

TEST_CASE("weighted max-min: one link divided by weight") {
  sim::MaxMinProblem p;
  const int l = p.add_link(90);
  p.add_flow(std::vector<int>{l}, 8.0);
  p.add_flow(std::vector<int>{l}, 1.0);
  // 90 / (8 + 1) = 10 per unit weight: 80 and 10.
  CHECK(solve(p) == std::vector<double>{80, 10});
}

TEST_CASE("weighted max-min: a heavy flow limited elsewhere leaves the link to the light one") {
  sim::MaxMinProblem p;
  const int narrow = p.add_link(2);
  const int wide = p.add_link(10);
  p.add_flow(std::vector<int>{narrow, wide}, 8.0);  // F0
  p.add_flow(std::vector<int>{wide}, 1.0);          // F1
  // Shares per unit weight: narrow 2 / 8 = 0.25, wide 10 / 9 = 1.11; narrow
  // binds first: F0 = 8 x 0.25 = 2. wide then has 10 - 2 = 8 for F1 alone
  // (work-conserving: the light flow is not held to 1/9 of the link).
  CHECK(solve(p) == std::vector<double>{2, 8});
}

TEST_CASE("weighted max-min: equal weights other than 1 are plain max-min") {
  sim::MaxMinProblem p;
  const int narrow = p.add_link(1);
  const int wide = p.add_link(10);
  p.add_flow(std::vector<int>{narrow, wide}, 4.0);
  p.add_flow(std::vector<int>{narrow}, 4.0);
  p.add_flow(std::vector<int>{wide}, 4.0);
  // As "a flow limited elsewhere" above: only weight ratios matter.
  CHECK(solve(p) == std::vector<double>{0.5, 0.5, 9.5});
}
