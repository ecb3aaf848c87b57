// Reading and evaluating `policy.rules` (core/controller/policy_rule.hpp has
// the schema). Conditions are read from the controller's state estimate and
// the straggler findings of the same iteration, after every module ran; a
// rule that fires changes knobs from the next iteration on (the Controller
// rebuilds each module whose knobs changed, which restarts its patience).
#pragma once

#include <cstdint>
#include <vector>

#include "core/controller/policy_module.hpp"
#include "core/controller/policy_rule.hpp"

namespace parashift::core {

class PolicyRegistry;
class YamlFields;
struct PolicyConfig;

/// Reads the list under `policy.rules`; each setting must name a registered
/// module's knob (or `enabled`) with a value in its range. Throws InputError
/// naming the file, line, field and what was expected.
/// `source` prefixes each rule's label ("template large-dense"; "" for the scenario).
std::vector<PolicyRule> read_policy_rules(YamlFields& policy, const PolicyRegistry& registry,
                                          const std::string& source);

class RuleEngine {
 public:
  explicit RuleEngine(std::vector<PolicyRule> rules);

  /// This iteration's rules that fire: held for their for_iterations and not
  /// fired since a condition last failed.
  std::vector<const PolicyRule*> evaluate(std::int64_t iteration, const StateEstimate& state,
                                          const std::vector<StragglerFinding>& stragglers);
  bool empty() const { return rules_.empty(); }

 private:
  std::vector<PolicyRule> rules_;
  std::vector<int> held_;    // consecutive iterations each rule's conditions held
  std::vector<bool> fired_;  // fired since they last failed
};

/// Applies a fired rule's settings to `config`; returns one line per setting,
/// "balance.min_gain_s 60 -> 10", and the names of the modules changed.
std::vector<std::string> apply_rule(const PolicyRule& rule, PolicyConfig& config,
                                    std::vector<std::string>& changed_modules);

}  // namespace parashift::core
