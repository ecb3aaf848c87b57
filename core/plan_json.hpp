// A plan as JSON, the one spelling every command's --json output uses.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "core/parallel_plan.hpp"

namespace parashift::core {

void to_json(nlohmann::json& out, const ParallelPlan& plan);

}  // namespace parashift::core
