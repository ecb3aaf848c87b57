// User rules (policy.rules) and policy templates (policy.template): rules are
// read with located errors, fire once when their conditions have held for
// for_iterations, change knobs logged as decisions of "rules"; a template's
// knobs and rules are the base the scenario's own keys override.
#include <doctest/doctest.h>

#include <string>
#include <variant>

#include "contract_support.hpp"
#include "core/controller/controller.hpp"
#include "core/input_error.hpp"
#include "fake_backend.hpp"

using namespace parashift;

namespace {

std::string rule(const std::string& when, const std::string& action) {
  // Line 3 "  - when: ...", line 4 "    do: ...".
  return "straggler: on\nrules:\n  - when: " + when + "\n    do: " + action + "\n";
}

}  // namespace

TEST_CASE("a rule is read with its conditions and settings") {
  const auto config =
      test::policy_from_yaml(rule("{straggler: gpu, slowdown: \">1.3\", for_iterations: 5}",
                                  "{balance.min_gain_s: 10, balance.enabled: true}"));
  REQUIRE(config.rules.size() == 1);
  const auto& r = config.rules[0];
  CHECK(r.label == "policy.rules[0]");
  CHECK(r.describe() == "straggler gpu, slowdown >1.3 for 5 iterations");
  REQUIRE(r.settings.size() == 2);
  CHECK(r.settings[0].module == "balance");
  CHECK(r.settings[0].knob == "min_gain_s");
  CHECK(r.settings[0].value == 10);
  CHECK(r.settings[1].knob == "enabled");
  CHECK(r.settings[1].value == 1);
}

TEST_CASE("bad rules are one located line each") {
  CHECK(test::policy_error(rule("{slowdwn: \">1\"}", "{balance.min_gain_s: 1}"))
            .find("scenario.yaml:3:12: policy.rules[0].when.slowdwn: unknown field (did you "
                  "mean 'slowdown'?") == 0);
  CHECK(test::policy_error(rule("{slowdown: 1.3}", "{balance.min_gain_s: 1}")) ==
        "scenario.yaml:3:22: policy.rules[0].when.slowdown: expected a comparison such as "
        "\">1.3\" (>, >=, <, <= and a number), found '1.3'");
  CHECK(test::policy_error(rule("{slowdown: \">x\"}", "{balance.min_gain_s: 1}"))
            .find("found '>x'") != std::string::npos);
  CHECK(test::policy_error(rule("{straggler: cpu}", "{balance.min_gain_s: 1}")) ==
        "scenario.yaml:3:23: policy.rules[0].when.straggler: expected one of any, gpu, node, "
        "link, found 'cpu'");
  CHECK(test::policy_error(rule("{}", "{balance.min_gain_s: 1}")) ==
        "scenario.yaml:3:5: policy.rules[0].when: expected at least one condition (straggler, "
        "slowdown, iteration, iteration_ms, exposed_comm_share)");
  CHECK(test::policy_error(rule("{iteration: \">5\"}", "{balancer.min_gain_s: 1}")) ==
        "scenario.yaml:4:31: policy.rules[0].do.balancer.min_gain_s: expected MODULE.KNOB with a "
        "module of: calibrate, straggler, balance, sync, aggregation, migrate, replan, batch");
  CHECK(test::policy_error(rule("{iteration: \">5\"}", "{balance.gain: 1}")) ==
        "scenario.yaml:4:24: policy.rules[0].do.balance.gain: unknown knob 'gain' of module "
        "balance (expected one of: enabled, min_gain_s, min_improvement, move_bandwidth_gbps, "
        "repartition, rebalance, patience)");
  // A setting is checked against the knob's own range.
  CHECK(test::policy_error(rule("{iteration: \">5\"}", "{balance.min_improvement: 2}")) ==
        "scenario.yaml:4:35: policy.rules[0].do.balance.min_improvement: expected a number in "
        "[0, 1], found '2'");
  CHECK(test::policy_error(rule("{iteration: \">5\"}", "{}")) ==
        "scenario.yaml:3:5: policy.rules[0].do: expected at least one MODULE.KNOB: value");
  CHECK(test::policy_error("rules: {when: {}}\n").find("policy.rules: expected a list") !=
        std::string::npos);
}

TEST_CASE("a rule fires once its conditions held for_iterations, and changes a knob live") {
  // pp 4, dp 2, 32 layers; rank 2 (stage 2 of replica 0) 2x slower from the
  // start. The balancer could win back time but needs a 1e9 s net gain; the
  // rule lowers that to 0 once a GPU straggler over 1.5x has been named for
  // 3 iterations.
  test::ContractCase c = test::pipeline_case(4, 2, 16, 32);
  test::FakeBackend backend(c);
  backend.set_slowdown(2, 2.0);
  core::Controller ctl(
      test::contract_job(c, 200),
      test::policy_from_yaml("straggler: on\nbalance: {min_gain_s: 1e9}\nrules:\n"
                             "  - when: {straggler: gpu, slowdown: \">1.5\", for_iterations: 3}\n"
                             "    do: {balance.min_gain_s: 0}\n"),
      backend.capabilities());
  for (int i = 0; i < 40; ++i) ctl.step(backend);
  std::int64_t named = -1, fired = -1, acted = -1;
  int rules_logged = 0;
  for (const auto& d : ctl.log()) {
    if (d.module == "straggler" && named < 0) named = d.iteration;
    if (d.module == "rules") {
      ++rules_logged;
      fired = d.iteration;
      CHECK(d.message ==
            "policy.rules[0] (straggler gpu, slowdown >1.5 for 3 iterations): "
            "balance.min_gain_s 1e+09 -> 0");
    }
    if (d.module == "balance" && d.applied && acted < 0) acted = d.iteration;
  }
  REQUIRE(named >= 0);
  // The finding is there from iteration `named` (the detector runs before the
  // rules in the same iteration): held 1, 2, 3 at named, named+1, named+2.
  CHECK(fired == named + 2);
  CHECK(rules_logged == 1);  // the straggler stays named: the rule does not fire again
  CHECK(ctl.config().find("balance")->knob("min_gain_s") == 0);
  // The balancer, rebuilt with the new knob, acts after the rule, never before.
  REQUIRE(acted >= 0);
  CHECK(acted > fired);
}

TEST_CASE("a rule can turn a module off") {
  test::ContractCase c = test::pipeline_case(2, 1, 8, 8);
  test::FakeBackend backend(c);
  core::Controller ctl(test::contract_job(c, 100),
                       test::policy_from_yaml("straggler: on\nbalance: on\nrules:\n"
                                              "  - when: {iteration: \">=6\"}\n"
                                              "    do: {balance.enabled: false}\n"),
                       backend.capabilities());
  for (int i = 0; i < 5; ++i) ctl.step(backend);
  CHECK(ctl.config().enabled("balance"));  // iterations 0..4: not yet
  ctl.step(backend);
  ctl.step(backend);  // iteration 6: fires
  CHECK_FALSE(ctl.config().enabled("balance"));
  CHECK(ctl.log().back().message ==
        "policy.rules[0] (iteration >=6): balance.enabled true -> false");
}

TEST_CASE("a template sets the base, the scenario's own keys override it knob by knob") {
  // scenarios/policies/large-dense.yaml: window 7, straggler 1.15 / 5,
  // balance 120 s / 0.03 / patience 5, one rule.
  const auto t = test::policy_from_yaml("template: large-dense\n");
  CHECK(t.window == 7);
  CHECK(t.enabled("straggler"));
  CHECK(t.find("straggler")->knob("patience") == 5);
  CHECK(t.enabled("balance"));
  CHECK(t.find("balance")->knob("min_gain_s") == 120);
  REQUIRE(t.rules.size() == 1);
  CHECK(t.rules[0].label == "template large-dense policy.rules[0]");

  const auto mine = test::policy_from_yaml(
      "template: large-dense\nbalance: {min_gain_s: 30}\nrules:\n"
      "  - when: {iteration: \">100\"}\n    do: {straggler.threshold: 1.5}\n");
  CHECK(mine.find("balance")->knob("min_gain_s") == 30);  // the scenario's
  CHECK(mine.find("balance")->knob("patience") == 5);     // the template's
  CHECK(mine.window == 7);
  REQUIRE(mine.rules.size() == 2);  // the template's, then the scenario's
  CHECK(mine.rules[1].label == "policy.rules[0]");
  CHECK_FALSE(test::policy_from_yaml("template: small\nbalance: off\n").enabled("balance"));

  CHECK(
      test::policy_error("template: huge\n")
          .find("scenario.yaml:1:11: policy.template: unknown policy template 'huge' (expected one "
                "of: large-dense, noisy-shared, small; ") == 0);
}
