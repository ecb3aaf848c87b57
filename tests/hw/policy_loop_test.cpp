// One policy scenario (tests/hw/data/policy-4rank.yaml: 4 stages, rank 1 at
// 2x, straggler + balance) through the one loop (core::JobRunner) on the
// fake backend, the simulator (simulate's run_scenario) and the CPU
// executor (4 HwBackend ranks on threads, on the counted clock, so what the
// policy sees is the work done and not the machine's speed): every backend
// ends in the same directive kinds, a re-partition that takes a layer off
// the slow stage. Counted compute makes the executor's decisions exact:
// per-layer time 3 units on healthy stages, 6 on stage 1.
#include <doctest/doctest.h>

#include <string>
#include <variant>
#include <vector>

#include "contract_harness.hpp"
#include "core/controller/job_runner.hpp"
#include "core/input_error.hpp"
#include "core/scenario/scenario.hpp"
#include "hw/exec/training_run.hpp"
#include "sim/run.hpp"
#include "tests/hw/hw_test_model.hpp"

using namespace parashift;

namespace {

std::vector<std::string> kinds(const std::vector<core::TakenDirective>& taken) {
  std::vector<std::string> out;
  for (const auto& t : taken) out.push_back(core::kind_name(t.directive.action));
  return out;
}

// Layers of stage 1 after the run's re-partitions (the split of the last one).
int stage1_layers(const std::vector<core::TakenDirective>& taken) {
  int layers = -1;
  for (const auto& t : taken)
    if (const auto* r = std::get_if<core::RepartitionDirective>(&t.directive.action))
      layers = r->layers_per_stage[1];
  return layers;
}

}  // namespace

TEST_CASE("one policy scenario on the fake, the simulator and the CPU executor: one re-partition") {
  const core::Scenario scenario =
      core::load_scenario(PARASHIFT_SOURCE_DIR "/tests/hw/data/policy-4rank.yaml");
  const std::int64_t iterations = scenario.run.iterations;
  REQUIRE(scenario.plan.gpus() == 4);
  const double slow = hw::scenario_slowdown(scenario, 1);
  CHECK(slow == 2.0);
  CHECK(hw::scenario_slowdown(scenario, 0) == 1.0);

  // The simulator, as `simulate` runs it.
  const sim::RunSummary simulated = sim::run_scenario(scenario);

  // The fake: the scenario's plan and layers, rank 1 at the same 2x.
  test::ContractCase c{scenario.plan, scenario.model.layers};
  test::FakeBackend fake(c);
  fake.set_slowdown(1, slow);
  core::JobRunner on_fake(fake, scenario.plan);
  on_fake.set_controller(
      core::Controller(test::contract_job(c, iterations), scenario.policy, fake.capabilities()));
  while (on_fake.iterations() < iterations) REQUIRE(on_fake.step());

  // The CPU executor, counted: every rank's slowdown from the scenario.
  test::ThreadedHwBackend executor(scenario.model, scenario.training.seq_len, scenario.plan,
                                   hw::ComputeClock::Counted);
  for (int r = 0; r < 4; ++r)
    executor.rank(r).set_compute_slowdown(hw::scenario_slowdown(scenario, r));
  core::JobRunner on_hw(executor, scenario.plan);
  on_hw.set_faults(scenario);
  on_hw.set_policy(scenario, iterations);
  while (on_hw.iterations() < iterations) REQUIRE(on_hw.step());

  const std::vector<std::string> one_repartition{"repartition"};
  CHECK(kinds(simulated.directives) == one_repartition);
  CHECK(kinds(on_fake.directives()) == one_repartition);
  CHECK(kinds(on_hw.directives()) == one_repartition);
  // Two layers at 2x on stage 1 (4 units) against 2 elsewhere: every backend
  // leaves stage 1 one layer.
  CHECK(stage1_layers(simulated.directives) == 1);
  CHECK(stage1_layers(on_fake.directives()) == 1);
  CHECK(stage1_layers(on_hw.directives()) == 1);
  CHECK(executor.rank(1).layers_per_stage()[1] == 1);
  // Each names rank 1 the straggler.
  for (const auto* stragglers :
       {&simulated.stragglers, &on_fake.stragglers(), &on_hw.stragglers()}) {
    REQUIRE(stragglers->size() == 1);
    CHECK((*stragglers)[0].what.rfind("gpu 1 ", 0) == 0);
  }
  // The executor's counted report is exact: after the move rank 1 runs 8
  // micro-batches x 1 layer x 3 units of 100 us x 2.0 = 4.8 ms.
  REQUIRE(on_hw.last_report());
  CHECK(on_hw.last_report()->rank_compute_ns[1] == 4'800'000);
}

TEST_CASE(
    "on the wall clock the executor runs slow events for the whole run: a start or a duration is "
    "bad input") {
  for (const char* event : {"{kind: slow, gpu: 1, factor: 2, at: 10s}",
                            "{kind: slow, gpu: 1, factor: 2, duration: 1min}"}) {
    CAPTURE(event);
    const core::Scenario scenario =
        core::load_scenario(PARASHIFT_SOURCE_DIR "/tests/hw/data/policy-4rank.yaml",
                            {std::string("faults.events=[") + event + "]"});
    CHECK_THROWS_WITH_AS(hw::scenario_slowdown(scenario, 1),
                         doctest::Contains("faults.events[0] (set on the command line): the hw "
                                           "executor runs slow events for the whole run (on "
                                           "the wall clock; with --clock virtual they may start "
                                           "and end); expected no 'at' and no 'duration'"),
                         core::InputError);
  }
}

TEST_CASE("on virtual time a slow event holds from its start for its duration") {
  // Rank 1 at 2x from 10 s for 1 min, rank 0 at 3x from 30 s to the end:
  // at 9.999 s nobody is slow; at 10 s rank 1 is; at 30 s both (and rank 2
  // never); at 70 s rank 1's minute is over (10 s + 60 s), rank 0 goes on.
  const core::Scenario scenario =
      core::load_scenario(PARASHIFT_SOURCE_DIR "/tests/hw/data/policy-4rank.yaml",
                          {"faults.events=[{kind: slow, gpu: 1, factor: 2, at: 10s, duration: "
                           "1min}, {kind: slow, gpu: 0, factor: 3, at: 30s}]"});
  const core::TimeNs s = 1'000'000'000;
  CHECK(hw::scenario_slowdown(scenario, 1, 10 * s - 1) == 1.0);
  CHECK(hw::scenario_slowdown(scenario, 1, 10 * s) == 2.0);
  CHECK(hw::scenario_slowdown(scenario, 0, 30 * s) == 3.0);
  CHECK(hw::scenario_slowdown(scenario, 1, 30 * s) == 2.0);
  CHECK(hw::scenario_slowdown(scenario, 2, 30 * s) == 1.0);
  CHECK(hw::scenario_slowdown(scenario, 1, 70 * s) == 1.0);
  CHECK(hw::scenario_slowdown(scenario, 0, 70 * s) == 3.0);
}

TEST_CASE("the executor refuses the events it cannot play on itself, naming the event") {
  for (const char* event : {"{kind: fail, target: gpu, id: 1, at: 10s}",
                            "{kind: degrade, scope: inter_node, fraction: 0.5, at: 0s}",
                            "{kind: jitter, sigma: 0.1}"}) {
    CAPTURE(event);
    const core::Scenario scenario =
        core::load_scenario(PARASHIFT_SOURCE_DIR "/tests/hw/data/policy-4rank.yaml",
                            {std::string("faults.events=[") + event + "]"});
    CHECK_THROWS_WITH_AS(hw::scenario_slowdown(scenario, 1),
                         doctest::Contains("faults.events[0] (set on the command line): kind "),
                         core::InputError);
    CHECK_THROWS_WITH_AS(hw::scenario_slowdown(scenario, 1),
                         doctest::Contains("is not something the hw executor can do to itself"),
                         core::InputError);
  }
}

TEST_CASE("on virtual time a degrade event with a scope slows every modelled link for its span") {
  // 10% of every link from 2 s for 3 s, and a link that is no pair of
  // ranks refused (ring_reorder_test.cpp: one named rank-to-rank link).
  const auto load = [](const std::string& event) {
    return core::load_scenario(PARASHIFT_SOURCE_DIR "/tests/hw/data/policy-4rank.yaml",
                               {"faults.events=[" + event + "]"});
  };
  const core::Scenario spans =
      load("{kind: degrade, scope: inter_node, fraction: 0.1, at: 2s, duration: 3s}");
  CHECK(hw::scenario_slowdown(spans, 1, 0) == 1.0);  // accepted on virtual time, no compute change
  const auto degrades = hw::virtual_degrades(spans);
  REQUIRE(degrades.size() == 1);
  hw::VirtualLink link{1e9, 1000};
  link.degrades = degrades;
  // 1 GB/s before 2 s and from 5 s on, 0.1 GB/s between; latency kept.
  const core::TimeNs s = core::kNsPerS;
  CHECK(link.at(2 * s - 1).Bps == 1e9);
  CHECK(link.at(2 * s).Bps == doctest::Approx(1e8));
  CHECK(link.at(5 * s - 1).Bps == doctest::Approx(1e8));
  CHECK(link.at(5 * s).Bps == 1e9);
  CHECK(link.at(3 * s).latency_ns == 1000);
  // A 4,000-byte all-reduce over 2 ranks at 0.1 GB/s: 2 steps + 40,000 ns.
  CHECK(hw::virtual_collective_ns(core::CollectiveKind::AllReduce, 4000, 2, link.at(3 * s)) ==
        42000);
  CHECK_THROWS_WITH_AS(
      hw::virtual_degrades(load("{kind: degrade, link: \"l0->p0\", fraction: 0.5, at: 0s}")),
      doctest::Contains("faults.events[0] (set on the command line): link 'l0->p0': the "
                        "executor's virtual time has a link from every rank to every other"),
      core::InputError);
}

TEST_CASE("the executor refuses faults.spares: its spares are --elastic nodes") {
  const core::Scenario scenario = core::load_scenario(
      PARASHIFT_SOURCE_DIR "/tests/hw/data/policy-4rank.yaml", {"faults.spares=2"});
  CHECK_THROWS_WITH_AS(hw::scenario_slowdown(scenario, 0),
                       doctest::Contains("faults.spares (set on the command line): the executor "
                                         "keeps no spare GPUs beside its ranks"),
                       core::InputError);
}

TEST_CASE("the one loop re-plans the executor live: tp2 pp2 to dp4 before iteration 2") {
  // A scheduled re-plan goes through the runner as a decided one does: the
  // backend re-shards, and the runner steps the new plan from then on.
  // Counted compute (3 units of 100 us per layer and sequence, shared by the
  // tp ranks): tp2 pp2 runs 4 micro-batches of 1 sequence through 2 layers
  // per rank, half of each, 4 x 2 x 3 / 2 = 12 units = 1.2 ms; dp4 one
  // micro-batch through all 4 layers, 1 x 4 x 3 = 12 units = 1.2 ms, the
  // same 48 units of work spread evenly either way. Rank 0's first report
  // after the switch is the new plan's: 4 layers' passes, not 2 halves.
  const auto from = test::tiny_plan(2, 2, 1), to = test::tiny_plan(1, 1, 4);
  test::ThreadedHwBackend backend(test::tiny_model(), test::kTinySeq, from,
                                  hw::ComputeClock::Counted);
  core::JobRunner runner(backend, from);
  runner.schedule(2, {core::ReplanDirective{to}, "test", 0});
  std::vector<core::StepReport> reports;
  while (runner.iterations() < 4 && runner.step()) reports.push_back(*runner.last_report());
  REQUIRE(reports.size() == 4);
  CHECK(runner.plan().label() == to.label());
  for (int r = 0; r < 4; ++r) CHECK(backend.rank(r).plan().label() == to.label());
  CHECK(reports[1].rank_compute_ns[0] == 1'200'000);
  CHECK(reports[3].rank_compute_ns[0] == 1'200'000);
  CHECK(backend.rank(0).layers_per_stage() == std::vector<int>{4});
  REQUIRE(runner.directives().size() == 1);
  CHECK(runner.directives()[0].iteration == 2);
}
