// A plan as JSON, the one spelling every command's --json output uses.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/parallel_plan.hpp"

namespace parashift::core {

void to_json(nlohmann::json& out, const ParallelPlan& plan);

/// The scenario overrides (`--set KEY=VALUE`) that make a scenario's plan
/// `plan`: every plan.* field and training.global_batch ("plan.tp=8", ...).
std::vector<std::string> plan_overrides(const ParallelPlan& plan);

}  // namespace parashift::core
