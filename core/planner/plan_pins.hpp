// Plan dimensions a user fixes before the search ("--pin tp=8"): each one
// that is set restricts the planner to plans with exactly that value.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/parallel_plan.hpp"

namespace parashift::core {

struct PlanPins {
  std::optional<int> tp;
  std::optional<int> pp;
  std::optional<int> dp;
  std::optional<int> cp;
  std::optional<int> virtual_stages;
  std::optional<int> micro_batch;
  std::optional<Schedule> schedule;
  std::optional<Recompute> recompute;
  std::optional<bool> sequence_parallel;
  std::optional<OptimizerSharding> optimizer_sharding;

  /// True when every pinned dimension of `plan` has the pinned value.
  bool matches(const ParallelPlan& plan) const;
};

/// Sets one pin from "KEY=VALUE"; KEY may carry a "plan." prefix
/// ("plan.tp=8" and "tp=8" are the same pin). Throws InputError naming the
/// key when it is unknown or the value does not parse.
void set_pin(PlanPins& pins, const std::string& key_equals_value);
/// Every item through set_pin; a dimension pinned twice ("tp=8", "plan.tp=4")
/// throws InputError naming both.
PlanPins parse_pins(const std::vector<std::string>& items);

/// The pinned dimensions as "tp=8 schedule=1f1b"; "none" when nothing is pinned.
std::string describe(const PlanPins& pins);

/// The keys set_pin accepts, in the order of ParallelPlan's fields.
std::vector<std::string> pin_keys();

}  // namespace parashift::core
