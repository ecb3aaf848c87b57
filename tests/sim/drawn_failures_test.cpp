// Failures drawn from the scenario's rates in `simulate` (SimBackend, as the
// fault campaigns draw them: sim::draw_failures with the run's seed), and
// recovered by the one loop: the same failures a campaign of that seed
// sees, reported by the step they happen before.
#include <doctest/doctest.h>

#include <string>
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
  // before the first step that starts at or after its time.
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
