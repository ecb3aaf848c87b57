// Which policy modules run and with which knobs: the scenario's `policy:`
// section, validated against the modules' registered knob specs.
//
// Schema (README; every key optional):
//
//   policy:
//     window: 5                  # iterations in each rank's median filter, 1..15
//     straggler:                 # name the slow GPU, node or link
//       enabled: true            # default true once the module is named
//       threshold: 1.15          # flag at >= threshold x the median per-layer time, 1.01..100
//       patience: 3              # ... for this many consecutive iterations, 1..1000;
//                                # clear below (1+threshold)/2 for as many
//     balance:                   # bubble-aware re-partition and micro-batch re-balance
//       enabled: true
//       min_gain_s: 60           # apply only if gain over the remaining run - cost >= this, >= 0
//       min_improvement: 0.05    # ... and the iteration gets at least this share faster, 0..1
//       move_bandwidth_gbps: 400 # per-GPU network rate for moving layer state, > 0
//       repartition: true        # may move layers between pipeline stages
//       rebalance: true          # may move micro-batches between data-parallel replicas
//       patience: 3              # iterations the same change must stay the best, 1..1000
//     plugins: [libspeed_split.so]  # policy modules from shared libraries (docs/plugins.md):
//                                # a name without '/' is looked for in the shipped plugin
//                                # folder, a relative path beside the scenario; each runs
//                                # after the built-ins, its knobs under its own name
//
// Unknown modules or knobs, and values out of range, are InputErrors naming
// the file, line, field and what was expected.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/controller/policy_rule.hpp"

namespace parashift::core {

class YamlFields;
class PolicyRegistry;

enum class KnobKind { Bool, Int, Number };

/// One knob of a module: its type, default and inclusive range.
struct KnobSpec {
  std::string name;
  KnobKind kind = KnobKind::Number;
  double default_value = 0;
  double min_value = 0;
  double max_value = 0;
  std::string description;
  /// "true or false", "an integer in [1, 1000]", "a number in [1.01, 100]".
  std::string expected() const;
};

/// The value of `key` in `fields` as `spec` expects (true/false, an integer
/// or a number in its range); an InputError naming the field otherwise.
double read_knob_value(YamlFields& fields, const std::string& key, const KnobSpec& spec);

struct ModuleConfig {
  std::string name;
  bool enabled = false;
  std::map<std::string, double> knobs;  // every knob of the module, defaults filled in
  /// The value of a registered knob (asserts that it exists).
  double knob(const std::string& knob_name) const;
  bool flag(const std::string& knob_name) const { return knob(knob_name) != 0.0; }
};

struct PolicyConfig {
  int window = 5;                     // iterations in each rank's median filter
  std::vector<ModuleConfig> modules;  // in registration order
  /// The built-in modules and the plugins `policy.plugins` loaded, in the
  /// order they run; null: the built-ins alone.
  std::shared_ptr<const PolicyRegistry> registry;
  /// `policy.rules` (a template's first, then the scenario's).
  std::vector<PolicyRule> rules;

  const ModuleConfig* find(const std::string& name) const;
  ModuleConfig* find(const std::string& name);
  bool enabled(const std::string& name) const;
};

constexpr int kMaxWindow = 15;

/// Every registered module with its defaults, all disabled.
PolicyConfig default_policy_config(const PolicyRegistry& registry);

/// Reads the `policy:` section against the built-in modules; plugins given
/// by relative path are looked for in `scenario_dir`.
PolicyConfig read_policy_config(YamlFields& policy_section,
                                const std::filesystem::path& scenario_dir = {});
PolicyConfig read_policy_config(YamlFields& policy_section, const PolicyRegistry& registry,
                                const std::filesystem::path& scenario_dir = {});

}  // namespace parashift::core
