// A user rule of the `policy.rules:` list, as read (core/controller/
// policy_rules.hpp reads and evaluates them):
//
//   rules:
//     - when: {straggler: gpu, slowdown: ">1.3", for_iterations: 5}
//       do: {balance.min_gain_s: 10, balance.patience: 1}
//
// Every condition of `when` must hold, for `for_iterations` iterations in a
// row; then each `do` setting is made once, logged as a decision of module
// "rules", and the rule waits until a condition fails before it can fire again.
#pragma once

#include <string>
#include <vector>

namespace parashift::core {

/// One comparison of a measured quantity with a number: `slowdown: ">1.3"`.
struct RuleCondition {
  enum class Metric {
    Slowdown,          // largest slowdown of the named stragglers (of the kind given); none: 1
    Iteration,         // the iteration just observed
    IterationMs,       // median iteration time, ms
    ExposedCommShare,  // largest rank's median exposed communication / iteration time
  };
  enum class Op { Greater, GreaterEqual, Less, LessEqual };
  Metric metric = Metric::Slowdown;
  Op op = Op::Greater;
  double value = 0;
  std::string text;  // "slowdown >1.3", as logged
  bool holds(double measured) const;
};

/// A knob of a module set to a value (knob "enabled": 1 on, 0 off).
struct KnobSetting {
  std::string module;
  std::string knob;
  double value = 0;
};

struct PolicyRule {
  enum class Subject { None, Any, Gpu, Node, Link };
  Subject straggler = Subject::None;  // `straggler:` a finding of this kind must be named
  std::vector<RuleCondition> conditions;
  int for_iterations = 1;
  std::vector<KnobSetting> settings;
  std::string label;  // "policy.rules[0]" ("template large-dense policy.rules[0]"), for the log
  /// "straggler gpu, slowdown >1.3 for 5 iterations".
  std::string describe() const;
};

}  // namespace parashift::core
