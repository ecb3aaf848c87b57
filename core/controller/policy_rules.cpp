#include "core/controller/policy_rules.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/controller/policy_config.hpp"
#include "core/controller/policy_registry.hpp"
#include "core/input_error.hpp"
#include "core/scenario/yaml_fields.hpp"

namespace parashift::core {

namespace {

constexpr std::size_t kMaxRules = 64;
constexpr int kMaxForIterations = 100000;

std::string number(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

const char* op_text(RuleCondition::Op op) {
  switch (op) {
    case RuleCondition::Op::Greater:
      return ">";
    case RuleCondition::Op::GreaterEqual:
      return ">=";
    case RuleCondition::Op::Less:
      return "<";
    case RuleCondition::Op::LessEqual:
      return "<=";
  }
  return "?";
}

// `">1.3"`, `"<= 0.2"`: an operator, then a finite number.
RuleCondition read_comparison(YamlFields& when, const std::string& key,
                              RuleCondition::Metric metric) {
  const YAML::Node node = when.child(key);
  const std::string expected = "expected a comparison such as \">1.3\" (>, >=, <, <= and a number)";
  if (!node.IsScalar()) when.fail(key, expected);
  std::string text = node.Scalar();
  RuleCondition c;
  c.metric = metric;
  std::size_t at = 0;
  if (text.rfind(">=", 0) == 0) {
    c.op = RuleCondition::Op::GreaterEqual, at = 2;
  } else if (text.rfind("<=", 0) == 0) {
    c.op = RuleCondition::Op::LessEqual, at = 2;
  } else if (text.rfind('>', 0) == 0) {
    c.op = RuleCondition::Op::Greater, at = 1;
  } else if (text.rfind('<', 0) == 0) {
    c.op = RuleCondition::Op::Less, at = 1;
  } else {
    when.fail(key, expected + ", found '" + text + "'");
  }
  const std::string rest = text.substr(at);
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(rest, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  while (used < rest.size() && rest[used] == ' ') ++used;
  if (used == 0 || used != rest.size() || !std::isfinite(value)) {
    when.fail(key, expected + ", found '" + text + "'");
  }
  c.value = value;
  c.text = key + " " + op_text(c.op) + number(value);
  return c;
}

PolicyRule::Subject read_subject(YamlFields& when) {
  const std::string s = when.string("straggler");
  if (s == "any") return PolicyRule::Subject::Any;
  if (s == "gpu") return PolicyRule::Subject::Gpu;
  if (s == "node") return PolicyRule::Subject::Node;
  if (s == "link") return PolicyRule::Subject::Link;
  when.fail("straggler", "expected one of any, gpu, node, link, found '" + s + "'");
}

KnobSetting read_setting(YamlFields& actions, const std::string& key,
                         const PolicyRegistry& registry) {
  const auto dot = key.find('.');
  const std::string module = key.substr(0, dot);
  const std::string knob = dot == std::string::npos ? "" : key.substr(dot + 1);
  const ModuleSpec* spec = registry.find(module);
  if (dot == std::string::npos || spec == nullptr) {
    actions.fail(key, "expected MODULE.KNOB with a module of: " + registry.names());
  }
  KnobSetting setting{module, knob, 0};
  if (knob == "enabled") {
    setting.value = read_knob_value(actions, key, {"enabled", KnobKind::Bool, 0, 0, 1, ""});
    return setting;
  }
  std::string known = "enabled";
  for (const auto& k : spec->knobs) {
    if (k.name == knob) {
      setting.value = read_knob_value(actions, key, k);
      return setting;
    }
    known += ", " + k.name;
  }
  actions.fail(
      key, "unknown knob '" + knob + "' of module " + module + " (expected one of: " + known + ")");
}

double measure(const RuleCondition& c, PolicyRule::Subject subject, std::int64_t iteration,
               const StateEstimate& state, const std::vector<StragglerFinding>& stragglers) {
  switch (c.metric) {
    case RuleCondition::Metric::Slowdown: {
      double worst = 1;
      for (const auto& f : stragglers) {
        const bool kind_matches =
            subject == PolicyRule::Subject::None || subject == PolicyRule::Subject::Any ||
            (subject == PolicyRule::Subject::Gpu && f.kind == StragglerFinding::Kind::Gpu) ||
            (subject == PolicyRule::Subject::Node && f.kind == StragglerFinding::Kind::Node) ||
            (subject == PolicyRule::Subject::Link && f.kind == StragglerFinding::Kind::Link);
        if (kind_matches) worst = std::max(worst, f.slowdown);
      }
      return worst;
    }
    case RuleCondition::Metric::Iteration:
      return static_cast<double>(iteration);
    case RuleCondition::Metric::IterationMs:
      return state.iteration_ns() / 1e6;
    case RuleCondition::Metric::ExposedCommShare: {
      if (state.iteration_ns() <= 0) return 0;
      double worst = 0;
      for (double c_ns : state.exposed_comm_ns()) worst = std::max(worst, c_ns);
      return worst / state.iteration_ns();
    }
  }
  return 0;
}

bool subject_named(PolicyRule::Subject subject, const std::vector<StragglerFinding>& stragglers) {
  if (subject == PolicyRule::Subject::None) return true;
  for (const auto& f : stragglers) {
    if (subject == PolicyRule::Subject::Any ||
        (subject == PolicyRule::Subject::Gpu && f.kind == StragglerFinding::Kind::Gpu) ||
        (subject == PolicyRule::Subject::Node && f.kind == StragglerFinding::Kind::Node) ||
        (subject == PolicyRule::Subject::Link && f.kind == StragglerFinding::Kind::Link)) {
      return true;
    }
  }
  return false;
}

}  // namespace

bool RuleCondition::holds(double measured) const {
  switch (op) {
    case Op::Greater:
      return measured > value;
    case Op::GreaterEqual:
      return measured >= value;
    case Op::Less:
      return measured < value;
    case Op::LessEqual:
      return measured <= value;
  }
  return false;
}

std::string PolicyRule::describe() const {
  static const char* const kSubjects[] = {"", "any", "gpu", "node", "link"};
  std::string out;
  if (straggler != Subject::None) {
    out = std::string("straggler ") + kSubjects[static_cast<int>(straggler)];
  }
  for (const auto& c : conditions) out += (out.empty() ? "" : ", ") + c.text;
  if (for_iterations > 1) out += " for " + std::to_string(for_iterations) + " iterations";
  return out;
}

std::vector<PolicyRule> read_policy_rules(YamlFields& policy, const PolicyRegistry& registry,
                                          const std::string& source) {
  const YAML::Node list = policy.child("rules");
  if (!list.IsSequence() || list.size() > kMaxRules) {
    policy.fail("rules", "expected a list of at most " + std::to_string(kMaxRules) +
                             " rules, each {when: {...}, do: {...}}");
  }
  std::vector<PolicyRule> rules;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node element = list[i];
    PolicyRule rule;
    const std::string where = policy.where_item("rules", element, i);
    rule.label = (source.empty() ? "" : source + " ") + "policy.rules[" + std::to_string(i) + "]";
    if (!element.IsMap()) throw InputError(where + ": expected a map {when: ..., do: ...}");
    YamlFields item = policy.item("rules", element, i);
    YamlFields when = item.map("when");
    if (when.has("straggler")) {
      rule.straggler = read_subject(when);
    } else {
      when.allow("straggler");
    }
    static const std::pair<const char*, RuleCondition::Metric> kMetrics[] = {
        {"slowdown", RuleCondition::Metric::Slowdown},
        {"iteration", RuleCondition::Metric::Iteration},
        {"iteration_ms", RuleCondition::Metric::IterationMs},
        {"exposed_comm_share", RuleCondition::Metric::ExposedCommShare},
    };
    for (const auto& [name, metric] : kMetrics) {
      if (when.has(name)) {
        rule.conditions.push_back(read_comparison(when, name, metric));
      } else {
        when.allow(name);
      }
    }
    if (when.has("for_iterations")) {
      rule.for_iterations = when.positive_int("for_iterations");
      if (rule.for_iterations > kMaxForIterations) {
        when.fail("for_iterations",
                  "expected an integer in [1, " + std::to_string(kMaxForIterations) + "]");
      }
    } else {
      when.allow("for_iterations");
    }
    when.reject_unknown();
    if (rule.straggler == PolicyRule::Subject::None && rule.conditions.empty()) {
      throw InputError(where +
                       ".when: expected at least one condition (straggler, "
                       "slowdown, iteration, iteration_ms, exposed_comm_share)");
    }
    YamlFields actions = item.map("do");
    for (const auto& entry : actions.node()) {
      rule.settings.push_back(read_setting(actions, actions.key_name(entry.first), registry));
    }
    if (rule.settings.empty()) {
      throw InputError(where + ".do: expected at least one MODULE.KNOB: value");
    }
    item.reject_unknown();
    rules.push_back(std::move(rule));
  }
  return rules;
}

RuleEngine::RuleEngine(std::vector<PolicyRule> rules)
    : rules_(std::move(rules)), held_(rules_.size(), 0), fired_(rules_.size(), false) {}

std::vector<const PolicyRule*> RuleEngine::evaluate(
    std::int64_t iteration, const StateEstimate& state,
    const std::vector<StragglerFinding>& stragglers) {
  std::vector<const PolicyRule*> firing;
  for (std::size_t i = 0; i < rules_.size(); ++i) {
    const PolicyRule& rule = rules_[i];
    bool holds = subject_named(rule.straggler, stragglers);
    for (const auto& c : rule.conditions) {
      holds = holds && c.holds(measure(c, rule.straggler, iteration, state, stragglers));
    }
    if (!holds) {
      held_[i] = 0;
      fired_[i] = false;
      continue;
    }
    held_[i] = std::min(held_[i] + 1, rule.for_iterations);
    if (held_[i] >= rule.for_iterations && !fired_[i]) {
      fired_[i] = true;
      firing.push_back(&rule);
    }
  }
  return firing;
}

std::vector<std::string> apply_rule(const PolicyRule& rule, PolicyConfig& config,
                                    std::vector<std::string>& changed_modules) {
  std::vector<std::string> lines;
  for (const auto& s : rule.settings) {
    ModuleConfig* m = config.find(s.module);
    if (m == nullptr) continue;  // read against the same registry: cannot happen
    if (s.knob == "enabled") {
      lines.push_back(s.module + ".enabled " + (m->enabled ? "true" : "false") + " -> " +
                      (s.value != 0 ? "true" : "false"));
      m->enabled = s.value != 0;
    } else {
      double& slot = m->knobs[s.knob];
      lines.push_back(s.module + "." + s.knob + " " + number(slot) + " -> " + number(s.value));
      slot = s.value;
    }
    if (std::find(changed_modules.begin(), changed_modules.end(), s.module) ==
        changed_modules.end()) {
      changed_modules.push_back(s.module);
    }
  }
  return lines;
}

}  // namespace parashift::core
