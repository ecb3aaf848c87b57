// The `aggregation` module on the CPU executor (hw/exec/hw_backend_rings.cpp):
// under virtual time every rank has a modelled link to every other, the
// report lists the links a step used, and a ReorderDirective re-splits the
// data-parallel ring so the gradient all-reduce leaves a slow link.
// scenarios/adapt-aggregation-hw.yaml on 4 rank threads (the `run` command's
// path, run there under mpirun by loop.run_hw.aggregation.np4).
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <variant>
#include <vector>

#include "contract_harness.hpp"
#include "core/controller/job_runner.hpp"
#include "core/input_error.hpp"
#include "core/scenario/scenario.hpp"
#include "hw/exec/training_run.hpp"

using namespace parashift;

namespace {

const char* const kScenario = PARASHIFT_SOURCE_DIR "/scenarios/adapt-aggregation-hw.yaml";

struct Run {
  std::vector<core::StepReport> reports;
  std::vector<core::TakenDirective> directives;
  core::Capabilities caps;        // before the first step (its routes' calls die with the backend)
  std::vector<int> order_at_end;  // group 0's ring order the backend runs after the last step
};

Run run(const std::vector<std::string>& overrides) {
  const core::Scenario scenario = core::load_scenario(kScenario, overrides);
  hw::VirtualLink link{100e9, 5000};  // --link-GBps 100, 5 us
  link.degrades = hw::virtual_degrades(scenario);
  test::ThreadedHwBackend backend(scenario.model, scenario.training.seq_len, scenario.plan,
                                  hw::ComputeClock::Counted, link);
  core::JobRunner runner(backend, scenario.plan);
  runner.set_faults(scenario);
  runner.set_policy(scenario, scenario.run.iterations);
  Run out;
  out.caps = backend.capabilities();
  while (runner.iterations() < scenario.run.iterations && runner.step())
    out.reports.push_back(*runner.last_report());
  out.directives = runner.directives();
  if (const core::Capabilities now = backend.capabilities(); now.ring_routes)
    out.order_at_end = now.ring_routes.order(0);
  return out;
}

const core::LinkTelemetry* find_link(const core::StepReport& r, const std::string& name) {
  for (const core::LinkTelemetry& l : r.links)
    if (l.link == name) return &l;
  return nullptr;
}

}  // namespace

TEST_CASE("on virtual time the executor's ring leaves a slow rank-to-rank link") {
  // The 4-layer model's gradients: 4 x (4 x 128^2 + 2 x 128 x 512) floats
  // = 3.15 MB, all-reduced around dp 4 in the launch order 0 -> 1 -> 2 ->
  // 3 -> 0. Each member sends 2 x 3/4 of it, 4.72 MB, at the slowest edge's
  // rate: r1->r2 at 1% of 100 GB/s, 1 GB/s, so 4.72 ms + 6 steps x 5 us a
  // bucket; the 2.4 ms of counted compute brings the iteration to 7.239 ms.
  // Healthy (every edge at 100 GB/s) the sync takes 0.05 ms: 2.567 ms.
  const std::vector<std::string> few{"run.iterations=6"};
  const Run on = run(few);
  REQUIRE(on.reports.size() == 6);
  REQUIRE(on.caps.link_telemetry);
  REQUIRE(on.caps.ring_routes);
  const core::LinkTelemetry* slow = find_link(on.reports[0], "r1->r2");
  const core::LinkTelemetry* healthy = find_link(on.reports[0], "r0->r1");
  REQUIRE(slow != nullptr);
  REQUIRE(healthy != nullptr);
  CHECK(slow->capacity_Bps == doctest::Approx(0.01 * slow->nominal_Bps));
  CHECK(healthy->capacity_Bps == healthy->nominal_Bps);
  CHECK(slow->bytes == doctest::Approx(healthy->bytes));  // one ring: every edge the same bytes
  CHECK(slow->utilisation > 0.6);                         // 4.72 of 7.24 ms
  CHECK(on.reports[0].iteration_ns == doctest::Approx(7.239e6).epsilon(1e-3));
  // The module re-orders the ring before iteration 1, off the slow link:
  // no member 1 followed by member 2 around the new ring.
  REQUIRE(on.directives.size() == 1);
  CHECK(on.directives[0].iteration == 1);
  const auto* reorder = std::get_if<core::ReorderDirective>(&on.directives[0].directive.action);
  REQUIRE(reorder != nullptr);
  const std::vector<int>& order = reorder->order;
  REQUIRE(order.size() == 4);
  for (std::size_t k = 0; k < order.size(); ++k)
    CHECK_FALSE((order[k] == 1 && order[(k + 1) % order.size()] == 2));
  CHECK(on.order_at_end == order);  // what the backend runs, and tells the module
  // From then on every iteration is the healthy one (iteration 1 also pays
  // the new ring's set-up barrier, 6 x 5 us), and r1->r2 carries only the
  // world's own few bytes (the loss, 36 bytes), not the gradients' 4.72 MB.
  for (std::size_t i = 1; i < on.reports.size(); ++i) {
    CHECK(on.reports[i].iteration_ns == doctest::Approx(i == 1 ? 2.597e6 : 2.567e6).epsilon(1e-3));
    const core::LinkTelemetry* now_slow = find_link(on.reports[i], "r1->r2");
    CHECK((now_slow == nullptr || now_slow->bytes < 1e3));
  }

  // Off, the ring keeps crossing it: every iteration at 7.239 ms.
  std::vector<std::string> off_overrides = few;
  off_overrides.push_back("policy.aggregation=off");
  const Run off = run(off_overrides);
  REQUIRE(off.reports.size() == 6);
  CHECK(off.directives.empty());
  CHECK(off.reports.back().iteration_ns == doctest::Approx(7.239e6).epsilon(1e-3));
}

TEST_CASE("the distributed optimizer's rings keep the launch order: no routes offered") {
  // Its reduce-scatter gives each replica its own shard: the ring order is
  // the shards' order, so the executor does not offer to change it.
  const Run sharded = run({"run.iterations=1", "plan.optimizer_sharding=distributed"});
  CHECK(sharded.caps.link_telemetry);
  CHECK_FALSE(sharded.caps.ring_routes);
}

TEST_CASE("a degrade on the executor names a link between two of its ranks, or none") {
  const auto load = [](const std::string& link) {
    return core::load_scenario(
        kScenario, {"faults.events=[{kind: degrade, link: \"" + link + "\", fraction: 0.5}]"});
  };
  const auto degrades = hw::virtual_degrades(load("r3->r0"));
  REQUIRE(degrades.size() == 1);
  CHECK(degrades[0].from_rank == 3);
  CHECK(degrades[0].to_rank == 0);
  hw::VirtualLink link{1e9, 1000};
  link.degrades = degrades;
  CHECK(link.Bps_between(0, 3, 0) == doctest::Approx(0.5e9));  // that link, that way
  CHECK(link.Bps_between(0, 0, 3) == 1e9);
  CHECK(link.at(0).Bps == 1e9);  // every link's rate: unchanged
  for (const char* bad : {"r1->r4", "r2->r2", "l0->p0", "r1->r2x"}) {
    CAPTURE(bad);
    const std::string expected =
        "faults.events[0] (set on the command line): link '" + std::string(bad) +
        "': the executor's virtual time has a link from every rank to every other; expected a "
        "link r<from>->r<to> between two of its ranks 0..3";
    CHECK_THROWS_WITH_AS(hw::virtual_degrades(load(bad)), doctest::Contains(expected.c_str()),
                         core::InputError);
  }
}
