#include "core/planner/plan_pins.hpp"

#include <charconv>

#include "core/input_error.hpp"

namespace parashift::core {

namespace {

int parse_positive(const std::string& key, const std::string& value) {
  int out = 0;
  const char* end = value.data() + value.size();
  const auto [ptr, ec] = std::from_chars(value.data(), end, out);
  if (ec != std::errc{} || ptr != end || out < 1) {
    throw InputError("--pin " + key + ": expected an integer >= 1, found '" + value + "'");
  }
  return out;
}

bool parse_bool(const std::string& key, const std::string& value) {
  if (value == "true" || value == "on" || value == "yes" || value == "1") return true;
  if (value == "false" || value == "off" || value == "no" || value == "0") return false;
  throw InputError("--pin " + key + ": expected true or false, found '" + value + "'");
}

template <typename Enum>
Enum parse_named(const std::string& key, const std::string& value,
                 Enum (*parse)(const std::string&)) {
  try {
    return parse(value);
  } catch (const InputError& e) {
    throw InputError("--pin " + key + ": " + e.what());
  }
}

}  // namespace

bool PlanPins::matches(const ParallelPlan& plan) const {
  return (!tp || *tp == plan.tp) && (!pp || *pp == plan.pp) && (!dp || *dp == plan.dp) &&
         (!cp || *cp == plan.cp) && (!virtual_stages || *virtual_stages == plan.virtual_stages) &&
         (!micro_batch || *micro_batch == plan.micro_batch) &&
         (!schedule || *schedule == plan.schedule) &&
         (!recompute || *recompute == plan.recompute) &&
         (!sequence_parallel || *sequence_parallel == plan.sequence_parallel) &&
         (!optimizer_sharding || *optimizer_sharding == plan.optimizer_sharding);
}

std::vector<std::string> pin_keys() {
  return {"tp",
          "pp",
          "dp",
          "cp",
          "virtual_stages",
          "micro_batch",
          "schedule",
          "recompute",
          "sequence_parallel",
          "optimizer_sharding"};
}

void set_pin(PlanPins& pins, const std::string& key_equals_value) {
  const auto eq = key_equals_value.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw InputError("--pin: expected KEY=VALUE (e.g. tp=8), found '" + key_equals_value + "'");
  }
  std::string key = key_equals_value.substr(0, eq);
  const std::string value = key_equals_value.substr(eq + 1);
  if (key.rfind("plan.", 0) == 0) key = key.substr(5);
  if (key == "tp")
    pins.tp = parse_positive(key, value);
  else if (key == "pp")
    pins.pp = parse_positive(key, value);
  else if (key == "dp")
    pins.dp = parse_positive(key, value);
  else if (key == "cp")
    pins.cp = parse_positive(key, value);
  else if (key == "virtual_stages")
    pins.virtual_stages = parse_positive(key, value);
  else if (key == "micro_batch")
    pins.micro_batch = parse_positive(key, value);
  else if (key == "schedule")
    pins.schedule = parse_named(key, value, parse_schedule);
  else if (key == "recompute")
    pins.recompute = parse_named(key, value, parse_recompute);
  else if (key == "sequence_parallel")
    pins.sequence_parallel = parse_bool(key, value);
  else if (key == "optimizer_sharding") {
    pins.optimizer_sharding = parse_named(key, value, parse_optimizer_sharding);
  } else {
    std::string known;
    for (const auto& k : pin_keys()) {
      if (!known.empty()) known += ", ";
      known += k;
    }
    throw InputError("--pin: unknown key '" + key + "'; expected one of " + known);
  }
}

std::string describe(const PlanPins& pins) {
  std::string out;
  auto add = [&out](const char* key, const std::string& value) {
    if (!out.empty()) out += ' ';
    out.append(key).append("=").append(value);
  };
  if (pins.tp) add("tp", std::to_string(*pins.tp));
  if (pins.pp) add("pp", std::to_string(*pins.pp));
  if (pins.dp) add("dp", std::to_string(*pins.dp));
  if (pins.cp) add("cp", std::to_string(*pins.cp));
  if (pins.virtual_stages) add("virtual_stages", std::to_string(*pins.virtual_stages));
  if (pins.micro_batch) add("micro_batch", std::to_string(*pins.micro_batch));
  if (pins.schedule) add("schedule", to_string(*pins.schedule));
  if (pins.recompute) add("recompute", to_string(*pins.recompute));
  if (pins.sequence_parallel) add("sequence_parallel", *pins.sequence_parallel ? "true" : "false");
  if (pins.optimizer_sharding) add("optimizer_sharding", to_string(*pins.optimizer_sharding));
  return out.empty() ? "none" : out;
}

PlanPins parse_pins(const std::vector<std::string>& items) {
  PlanPins pins;
  std::vector<std::string> seen;  // "key=value" as given, key without "plan."
  for (const auto& item : items) {
    set_pin(pins, item);
    std::string key = item.substr(0, item.find('='));
    if (key.rfind("plan.", 0) == 0) key = key.substr(5);
    for (const auto& earlier : seen) {
      if (earlier.substr(0, earlier.find('=')) == key) {
        throw InputError("--pin " + key + " given twice ('" + earlier + "' and '" + item +
                         "'); pin each dimension once");
      }
    }
    seen.push_back(key + item.substr(item.find('=')));
  }
  return pins;
}

}  // namespace parashift::core
