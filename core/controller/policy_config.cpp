#include "core/controller/policy_config.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <system_error>

#include "core/assert.hpp"
#include "core/controller/plugin_module.hpp"
#include "core/controller/policy_registry.hpp"
#include "core/controller/policy_rules.hpp"
#include "core/data_dir.hpp"
#include "core/input_error.hpp"
#include "core/scenario/yaml_fields.hpp"

namespace parashift::core {

namespace {

std::string number(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

}  // namespace

double read_knob_value(YamlFields& fields, const std::string& key, const KnobSpec& spec) {
  if (spec.kind == KnobKind::Bool) return *fields.optional_bool(key) ? 1.0 : 0.0;
  const YAML::Node value = fields.child(key);
  if (!value.IsScalar()) fields.fail(key, "expected " + spec.expected());
  double parsed = 0;
  bool ok = false;
  if (spec.kind == KnobKind::Int) {
    long long whole = 0;
    ok = YAML::convert<long long>::decode(value, whole);
    parsed = static_cast<double>(whole);
  } else {
    ok = YAML::convert<double>::decode(value, parsed) && std::isfinite(parsed);
  }
  if (!ok || parsed < spec.min_value || parsed > spec.max_value) {
    fields.fail(key, "expected " + spec.expected() + ", found '" + value.Scalar() + "'");
  }
  return parsed;
}

namespace {

constexpr std::size_t kMaxPlugins = 16;

// policy.plugins: each library loaded and added to `registry` after the
// built-ins; returns the plugins' module names (enabled by being listed).
std::vector<std::string> load_plugins(YamlFields& policy, PolicyRegistry& registry,
                                      const std::filesystem::path& scenario_dir) {
  std::vector<std::string> names;
  const YAML::Node list = policy.child("plugins");
  if (!list.IsSequence() || list.size() > kMaxPlugins) {
    policy.fail("plugins", "expected a list of at most " + std::to_string(kMaxPlugins) +
                               " plugin library paths");
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node element = list[i];
    const std::string where = policy.where_item("plugins", element, i);
    if (!element.IsScalar() || element.Scalar().empty()) {
      throw InputError(where + ": expected the path of a plugin library");
    }
    const std::filesystem::path written = element.Scalar();
    const std::filesystem::path path = written.string().find('/') == std::string::npos
                                           ? shipped_plugin_dir() / written
                                       : written.is_relative() ? scenario_dir / written
                                                               : written;
    ModuleSpec spec;
    try {
      spec = load_policy_plugin(path);
    } catch (const InputError& e) {
      throw InputError(where + ": " + e.what());
    }
    if (registry.find(spec.name) != nullptr) {
      throw InputError(where + ": plugin module name '" + spec.name +
                       "' is taken (modules: " + registry.names() + ")");
    }
    names.push_back(spec.name);
    registry.add(std::move(spec));
  }
  return names;
}

}  // namespace

std::string KnobSpec::expected() const {
  switch (kind) {
    case KnobKind::Bool:
      return "true or false";
    case KnobKind::Int:
      return "an integer in [" + number(min_value) + ", " + number(max_value) + "]";
    case KnobKind::Number:
      break;
  }
  if (std::isinf(max_value)) return "a number >= " + number(min_value);
  return "a number in [" + number(min_value) + ", " + number(max_value) + "]";
}

double ModuleConfig::knob(const std::string& knob_name) const {
  const auto it = knobs.find(knob_name);
  PARASHIFT_ASSERT(it != knobs.end(), "knob not registered for this module");
  return it->second;
}

const ModuleConfig* PolicyConfig::find(const std::string& name) const {
  for (const auto& m : modules) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

ModuleConfig* PolicyConfig::find(const std::string& name) {
  for (auto& m : modules) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

bool PolicyConfig::enabled(const std::string& name) const {
  const ModuleConfig* m = find(name);
  return m != nullptr && m->enabled;
}

PolicyConfig default_policy_config(const PolicyRegistry& registry) {
  PolicyConfig config;
  for (const auto& spec : registry.modules()) {
    ModuleConfig m;
    m.name = spec.name;
    for (const auto& knob : spec.knobs) m.knobs[knob.name] = knob.default_value;
    config.modules.push_back(std::move(m));
  }
  return config;
}

PolicyConfig read_policy_config(YamlFields& policy_section,
                                const std::filesystem::path& scenario_dir) {
  return read_policy_config(policy_section, builtin_policy_registry(), scenario_dir);
}

namespace {

// The scenario's policy keys, or a template's, over `config`: `window`, each
// module (on/off or a map of knobs; knobs not written keep their value) and
// `rules` (appended). `plugins` and `template` are read by the caller.
void read_sections(YamlFields& policy, const PolicyRegistry& registry, PolicyConfig& config,
                   const std::string& source) {
  const std::string expected = "window, template, plugins, rules, " + registry.names();
  for (const auto& entry : policy.node()) {
    const std::string key = policy.key_name(entry.first);
    if (key == "plugins" || key == "template") continue;
    if (key == "window") {
      const int window = policy.positive_int("window");
      if (window > kMaxWindow) {
        policy.fail("window", "expected an integer in [1, " + std::to_string(kMaxWindow) +
                                  "], found '" + std::to_string(window) + "'");
      }
      config.window = window;
      continue;
    }
    if (key == "rules") {
      for (auto& rule : read_policy_rules(policy, registry, source))
        config.rules.push_back(std::move(rule));
      continue;
    }
    const ModuleSpec* spec = registry.find(key);
    if (spec == nullptr) {
      policy.fail(key, "unknown policy module '" + key + "' (expected one of: " + expected + ")");
    }
    ModuleConfig& m = *config.find(key);
    if (entry.second.IsScalar()) {
      // `balance: off` / `straggler: on`: the module with its knobs as they are.
      const auto on = policy.optional_bool(key);
      m.enabled = on.value_or(false);
      continue;
    }
    YamlFields fields = policy.map(key);
    m.enabled = fields.optional_bool("enabled").value_or(true);
    for (const auto& knob : spec->knobs) {
      if (fields.has(knob.name)) {
        m.knobs[knob.name] = read_knob_value(fields, knob.name, knob);
      } else {
        fields.allow(knob.name);
      }
    }
    fields.reject_unknown();
  }
}

// policy.template: NAME reads <shipped data>/policies/NAME.yaml into `config`.
void read_template(YamlFields& policy, const PolicyRegistry& registry, PolicyConfig& config) {
  const std::string name = policy.string("template");
  const std::filesystem::path dir = shipped_data_dir() / "policies";
  std::string known;
  std::error_code ec;
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".yaml") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    policy.fail("template", "unknown policy template '" + name + "' (expected one of: " + known +
                                "; " + dir.string() + ")");
  }
  const std::filesystem::path file = dir / (name + ".yaml");
  YAML::Node root;
  try {
    root = YAML::LoadFile(file.string());
  } catch (const YAML::Exception& e) {
    throw InputError(file.string() + ": malformed YAML: " + e.msg);
  }
  if (!root.IsMap()) throw InputError(file.string() + ": expected a map of policy fields");
  YamlFields fields(root, "policy", file.string());
  if (fields.has("template") || fields.has("plugins")) {
    fields.fail(fields.has("template") ? "template" : "plugins",
                "a template names neither another template nor plugins");
  }
  read_sections(fields, registry, config, "template " + name);
}

}  // namespace

PolicyConfig read_policy_config(YamlFields& policy, const PolicyRegistry& builtin,
                                const std::filesystem::path& scenario_dir) {
  PolicyRegistry registry = builtin;
  std::vector<std::string> plugins;
  if (policy.has("plugins")) plugins = load_plugins(policy, registry, scenario_dir);
  PolicyConfig config = default_policy_config(registry);
  if (policy.has("template")) read_template(policy, registry, config);
  for (const auto& name : plugins) config.find(name)->enabled = true;
  if (!plugins.empty()) config.registry = std::make_shared<const PolicyRegistry>(registry);
  read_sections(policy, registry, config, "");
  policy.reject_unknown();
  const ModuleConfig* replan = config.find("replan");
  const ModuleConfig* calibrate = config.find("calibrate");
  if (replan != nullptr && replan->enabled && (calibrate == nullptr || !calibrate->enabled)) {
    policy.fail(
        "replan",
        "needs calibrate on: it re-plans from the calibrated cost model (add calibrate: on)");
  }
  return config;
}

}  // namespace parashift::core
