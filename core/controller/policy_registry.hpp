// Policy modules registered by name, each with a one-line description (its
// rule), its knobs and a factory; built-ins are added in one explicit
// function, never by static constructors.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/controller/policy_config.hpp"
#include "core/controller/policy_module.hpp"

namespace parashift::core {

struct ModuleSpec {
  std::string name;
  std::string description;
  std::vector<KnobSpec> knobs;
  std::function<std::unique_ptr<PolicyModule>(const ModuleConfig&)> make;
};

class PolicyRegistry {
 public:
  /// Asserts the name is new.
  void add(ModuleSpec spec);
  const ModuleSpec* find(const std::string& name) const;
  const std::vector<ModuleSpec>& modules() const { return modules_; }
  /// "straggler, balance".
  std::string names() const;

 private:
  std::vector<ModuleSpec> modules_;
};

/// Adds "straggler" and "balance", in that order (the order they run in).
void register_builtin_modules(PolicyRegistry& registry);
/// A registry holding the built-in modules.
PolicyRegistry builtin_policy_registry();

}  // namespace parashift::core
