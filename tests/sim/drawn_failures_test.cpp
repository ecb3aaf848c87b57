// Failures drawn from the scenario's rates in `simulate` (SimBackend, as the
// fault campaigns draw them: sim::draw_failures with the run's seed), and
// recovered by the one loop: the same failures a campaign of that seed
// sees, reported by the step they happen before.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core/scenario/scenario.hpp"
#include "sim/faults/failure_events.hpp"
#include "sim/run.hpp"

using namespace parashift;

namespace {

const std::string kSmall = std::string(PARASHIFT_SOURCE_DIR) + "/tests/tools/data/small.yaml";

core::Scenario drawn(const std::string& faults, int iterations, int seed = 7) {
  return core::load_scenario(kSmall,
                             {"faults=" + faults, "run.iterations=" + std::to_string(iterations),
                              "run.seed=" + std::to_string(seed)});
}

}  // namespace

TEST_CASE("simulate injects the failures its rates draw, as the campaign of its seed does") {
  // 16 GPUs of 2 nodes plus 8 spares, each failing every 0.1 h on average:
  // one failure every 15 s over the 24 GPU slots. The campaign's draw over
  // faults.days for seed 0 of scenario seed 7 gives the first; the run must see exactly it,
  // before the first step that starts at or after its time. Each failure
  // takes its GPU alone here (replace gpu); the next test drains hosts.
  const std::string faults = "{gpu_mtbf_hours: 0.1, snapshot: {every: 2}, spares: 8, replace: gpu}";
  const core::Scenario scenario = drawn(faults, 60);
  const topo::Topology& t = scenario.topology;
  REQUIRE(t.gpu_count() == 16);
  // The campaign's targets: 16 GPUs + 8 spares on a third host, one rack.
  const sim::FailureTargets targets{24, 3, sim::fabric_links(t), 1};
  const auto expected = sim::draw_failures(
      *scenario.faults, targets, sim::campaign_draw_seed(7, 0),
      static_cast<core::TimeNs>(scenario.faults->days * 24 * 3600) * core::kNsPerS);
  REQUIRE_FALSE(expected.empty());
  const sim::RunSummary run = sim::run_scenario(scenario);
  REQUIRE_FALSE(run.failures.empty());
  CHECK(run.failures[0].kind == "fail");
  CHECK(run.failures[0].component == "gpu " + std::to_string(expected[0].target));
  // Seen at the start of the first step at or after it: within one
  // iteration (0.84 s healthy, a snapshot's copy on top) of the draw.
  CHECK(run.failures[0].at_ns >= expected[0].at_ns);
  CHECK(run.failures[0].at_ns < expected[0].at_ns + 2 * core::kNsPerS);
  // Recovered in the loop (snapshots every 2 iterations, spares): the run
  // goes on to its 60 iterations (those run again after a restore aside).
  CHECK(run.restarts >= 1);
  CHECK_FALSE(run.ended_on_failure);
  CHECK(run.iterations - run.replayed == 60);
  // Deterministic for a seed, and another seed draws other failures.
  const sim::RunSummary again = sim::run_scenario(drawn(faults, 60));
  CHECK(again.total_ns == run.total_ns);
  CHECK(again.failures.size() == run.failures.size());
  const sim::RunSummary other = sim::run_scenario(drawn(faults, 60, 8));
  REQUIRE_FALSE(other.failures.empty());
  CHECK(other.failures[0].at_ns != run.failures[0].at_ns);
}

TEST_CASE("many drawn failures: remaps, shrinks and regrows in one recovery, and a clean end") {
  // Every GPU slot failing every 3 min on average and back after 30 s:
  // failures come faster than the restarts. A regrow's re-plan followed by
  // a step that fails at once used to leave the simulator checking the
  // next remap against the plan before the regrow (an exception: "remap
  // rank 12 ... the job has ranks 0..11"). The run must end by itself,
  // cleanly: recovered where a plan fits, the repair waited for where none
  // does (30 s, so failures drawn meanwhile come in at the next step).
  const sim::RunSummary run = sim::run_scenario(drawn(
      "{gpu_mtbf_hours: 0.05, snapshot: {every: 2}, spares: 8, repair: 30s, replace: gpu}", 20));
  CHECK(run.restarts > 1);
  bool shrunk = false, regrown = false;
  for (const auto& t : run.directives)
    if (const auto* r = std::get_if<core::ReplanDirective>(&t.directive.action)) {
      shrunk = shrunk || r->plan.dp < 4;
      regrown = regrown || t.directive.reason.rfind("regrow", 0) == 0;
    }
  CHECK(shrunk);
  CHECK(regrown);
}

TEST_CASE("a drawn GPU failure drains its host under faults.replace host, as in the campaigns") {
  // The first test's scenario under the default replace host: the draw's
  // first failure, GPU T on host T / 8 (8 GPUs a host, spare host 2 last),
  // is reported first, then the host's 7 other GPUs as drains, in GPU
  // order; where ranks ran there (a job host) they all move, each onto the
  // spare host (GPUs 16-23), before the next iteration.
  const core::Scenario scenario =
      drawn("{gpu_mtbf_hours: 0.1, snapshot: {every: 2}, spares: 8, repair: 30s}", 10);
  const topo::Topology& t = scenario.topology;
  const sim::FailureTargets targets{24, 3, sim::fabric_links(t), 1};
  const auto expected = sim::draw_failures(
      *scenario.faults, targets, sim::campaign_draw_seed(7, 0),
      static_cast<core::TimeNs>(scenario.faults->days * 24 * 3600) * core::kNsPerS);
  REQUIRE_FALSE(expected.empty());
  const int failed = expected[0].target;
  const int host = failed / 8;
  const sim::RunSummary run = sim::run_scenario(scenario);
  REQUIRE(run.failures.size() >= 8);
  CHECK(run.failures[0].kind == "fail");
  CHECK(run.failures[0].component == "gpu " + std::to_string(failed));
  std::vector<std::string> drained;
  for (std::size_t i = 1; i < 8; ++i) {
    CHECK(run.failures[i].kind == "drain");
    drained.push_back(run.failures[i].component);
  }
  std::vector<std::string> mates;
  for (int g = host * 8; g < host * 8 + 8; ++g)
    if (g != failed) mates.push_back("gpu " + std::to_string(g));
  CHECK(drained == mates);
  // Seed 7 draws a job GPU first (GPU 11, host 1): its ranks, rank r on
  // GPU r, move together, rank host * 8 + k onto spare GPU 16 + k.
  REQUIRE(host < 2);
  std::vector<std::pair<int, int>> moves, want;
  for (const auto& d : run.directives)
    if (const auto* m = std::get_if<core::RemapDirective>(&d.directive.action))
      if (moves.size() < 8) moves.emplace_back(m->rank, m->spare_gpu);
  for (int k = 0; k < 8; ++k) want.emplace_back(host * 8 + k, 16 + k);
  CHECK(moves == want);
  CHECK_FALSE(run.ended_on_failure);
}
