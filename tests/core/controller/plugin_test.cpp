// Policy plugins (core/controller/plugin_module.cpp): the example plugin
// loads by name and re-partitions a pipeline around a slow stage through the
// same Controller as the built-ins; each bad library is refused with one
// located line; a plugin's bad decision ends the run naming the plugin.
#include <doctest/doctest.h>

#include <string>
#include <variant>

#include "contract_support.hpp"
#include "core/controller/controller.hpp"
#include "core/input_error.hpp"
#include "fake_backend.hpp"

using namespace parashift;

namespace {

std::string plugins(const std::string& path) {
  return "plugins: [" + path + "]\n";
}

// The InputError that ends 8 iterations of case `c` with plugin `path` ("" if none).
std::string run_error(const test::ContractCase& c, test::FakeBackend& backend,
                      const std::string& path) {
  core::Controller ctl(test::contract_job(c, 100), test::policy_from_yaml(plugins(path)),
                       backend.capabilities());
  try {
    for (int i = 0; i < 8; ++i) ctl.step(backend);
  } catch (const core::InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("the example plugin loads by name, with its knobs, after the built-ins") {
  const auto config =
      test::policy_from_yaml(plugins("libspeed_split.so") + "speed_split: {min_gain_s: 0}\n");
  REQUIRE(config.registry != nullptr);
  CHECK(config.registry->names() ==
        "calibrate, straggler, balance, sync, aggregation, migrate, replan, batch, speed_split");
  CHECK(config.enabled("speed_split"));  // listed: on
  CHECK_FALSE(config.enabled("balance"));
  CHECK(config.find("speed_split")->knob("min_gain_s") == 0);
  CHECK(config.find("speed_split")->knob("patience") == 3);  // the plugin's default
  // Its knobs are checked like a built-in module's.
  CHECK(test::policy_error(plugins("libspeed_split.so") + "speed_split: {min_improvement: 2}\n") ==
        "scenario.yaml:2:32: policy.speed_split.min_improvement: expected a number in [0, 1], "
        "found '2'");
}

TEST_CASE("the example plugin moves layers off a 2x slower stage, once") {
  // pp 4, 32 layers (8 each), m = 8; stage 2's only GPU 2x slower from the start.
  // The plugin's split in proportion to speed (1, 1, 1/2, 1; sum 3.5), one
  // layer each first: 1 + 28 x 1/3.5 = 9 for a fast stage, 1 + 28 x 0.5/3.5 = 5
  // for the slow one: [9, 9, 5, 9], slowest stage 16 -> 10 layer times.
  test::ContractCase c = test::pipeline_case(4, 1, 8, 32);
  c.jitter = 0.01;
  test::FakeBackend backend(c);
  backend.set_slowdown(2, 2.0);
  core::Controller ctl(
      test::contract_job(c, 200),
      test::policy_from_yaml(plugins("libspeed_split.so") + "speed_split: {min_gain_s: 0}\n"),
      backend.capabilities());
  int directives = 0;
  for (int i = 0; i < 60; ++i) {
    ctl.step(backend);
    directives = static_cast<int>(ctl.directives_issued());
  }
  CHECK(directives == 1);  // the split it reaches is its own fixed point: no second move
  CHECK(backend.layers_per_virtual_stage() == std::vector<int>{9, 9, 5, 9});
  bool logged = false;
  for (const auto& d : ctl.log()) {
    if (d.module != "speed_split" || !d.applied) continue;
    logged = true;
    // Gain (16 - 10) ms x (m + pp - 1 = 11) x the iterations left (< 200): < 13.2 s.
    CHECK(d.gain_s > 10);
    CHECK(d.gain_s < 13.2);
    CHECK(d.cost_s == 1);  // the move_cost_s default
    CHECK(d.message.find("stage 2") != std::string::npos);
  }
  CHECK(logged);
}

TEST_CASE("a plugin's decisions are logged and applied, notes change nothing") {
  test::ContractCase c = test::pipeline_case(2, 2, 16, 8);  // 8 micro-batches per replica
  test::FakeBackend backend(c);
  core::Controller ctl(test::contract_job(c, 100),
                       test::policy_from_yaml(plugins(PARASHIFT_TEST_PLUGIN_GOOD)),
                       backend.capabilities());
  for (int i = 0; i < 8; ++i) ctl.step(backend);
  // The test plugin acts once, at iteration 4 (its `at` default): one note and
  // one rebalance of replica 0's micro-batch to replica 1.
  CHECK(ctl.directives_issued() == 1);
  CHECK(backend.micro_batches() == std::vector<int>{7, 9});
  int notes = 0;
  for (const auto& d : ctl.log()) {
    if (d.module == "always_rebalance" && !d.directive) {
      ++notes;
      CHECK(d.iteration == 4);
      CHECK(d.message == "looked at it");
    }
  }
  CHECK(notes == 1);
}

TEST_CASE("bad plugin libraries are refused with one located line") {
  // Another ABI version is refused before any other field is read.
  const std::string abi = test::policy_error(plugins(PARASHIFT_TEST_PLUGIN_ABI_99));
  CHECK(abi.find("scenario.yaml:1:11: policy.plugins[0]: ") == 0);
  CHECK(abi.find(": plugin ABI version 99; this parashift loads version 1") != std::string::npos);
  CHECK(abi.find('\n') == std::string::npos);
  CHECK(test::policy_error(plugins(PARASHIFT_TEST_PLUGIN_NO_SYMBOL))
            .find("not a parashift plugin (it exports no 'parashift_policy_plugin'") !=
        std::string::npos);
  // A file that is no shared library (this test's own source), and no file.
  CHECK(test::policy_error(plugins(PARASHIFT_SOURCE_DIR "/tests/core/controller/plugin_test.cpp"))
            .find(": not a loadable shared library (") != std::string::npos);
  CHECK(test::policy_error(plugins("/nonexistent/libx.so")) ==
        "scenario.yaml:1:11: policy.plugins[0]: /nonexistent/libx.so: no such plugin file");
  // The same plugin twice: its name is taken.
  CHECK(test::policy_error("plugins: [libspeed_split.so, libspeed_split.so]\n")
            .find("policy.plugins[1]: plugin module name 'speed_split' is taken") !=
        std::string::npos);
  CHECK(test::policy_error("plugins: libspeed_split.so\n") ==
        "scenario.yaml:1:10: policy.plugins: expected a list of at most 16 plugin library "
        "paths");
  CHECK(test::policy_error("plugins: [[a]]\n") ==
        "scenario.yaml:1:11: policy.plugins[0]: expected the path of a plugin library");
}

TEST_CASE("a plugin's impossible decision ends the run naming the plugin") {
  test::ContractCase c = test::pipeline_case(4, 1, 8, 16);
  test::FakeBackend backend(c);
  const std::string error = run_error(c, backend, PARASHIFT_TEST_PLUGIN_BAD_SPLIT);
  CHECK(error.find("(plugin 'always_rebalance'): iteration 4: layers per virtual stage: 3 "
                   "values, the plan has 4") != std::string::npos);
  CHECK(backend.layers_per_virtual_stage() == std::vector<int>{4, 4, 4, 4});  // nothing applied
}

TEST_CASE("a plugin's uneven re-balance under FSDP is refused naming the plugin") {
  // The test plugin's re-balance {8, 8} -> {7, 9}, on the same job sharded
  // with FSDP: every pass gathers over the data-parallel group, so replicas
  // cannot run different passes.
  test::ContractCase c = test::pipeline_case(2, 2, 16, 8);
  c.plan.optimizer_sharding = core::OptimizerSharding::Fsdp;
  test::FakeBackend backend(c);
  const std::string error = run_error(c, backend, PARASHIFT_TEST_PLUGIN_GOOD);
  INFO(error);
  CHECK(error.find("(plugin 'always_rebalance'): iteration 4: micro-batches per replica: [7,9] "
                   "differ, but under FSDP every replica runs the same passes") !=
        std::string::npos);
  CHECK(backend.micro_batches() == std::vector<int>{8, 8});  // nothing applied
}
