#include "core/plan_json.hpp"

#include <nlohmann/json.hpp>

#include "core/compress/compression_spec.hpp"

namespace parashift::core {

void to_json(nlohmann::json& out, const ParallelPlan& p) {
  out = {{"tp", p.tp},
         {"pp", p.pp},
         {"dp", p.dp},
         {"cp", p.cp},
         {"virtual_stages", p.virtual_stages},
         {"micro_batch", p.micro_batch},
         {"global_batch", p.global_batch},
         {"micro_batches", p.micro_batches()},
         {"schedule", to_string(p.schedule)},
         {"recompute", to_string(p.recompute)},
         {"recompute_layers", p.recompute_layers},
         {"sequence_parallel", p.sequence_parallel},
         {"optimizer_sharding", to_string(p.optimizer_sharding)},
         {"dp_shard", p.dp_shard},
         {"precision", to_string(p.precision)},
         {"sync", to_string(p.sync)},
         {"compression", to_string(p.compression)},
         {"order", to_string(p.order)}};
}

std::vector<std::string> plan_overrides(const ParallelPlan& p) {
  auto set = [](const char* key, const std::string& value) {
    return std::string(key) + "=" + value;
  };
  return {set("plan.tp", std::to_string(p.tp)),
          set("plan.pp", std::to_string(p.pp)),
          set("plan.dp", std::to_string(p.dp)),
          set("plan.cp", std::to_string(p.cp)),
          set("plan.virtual_stages", std::to_string(p.virtual_stages)),
          set("plan.micro_batch", std::to_string(p.micro_batch)),
          set("plan.schedule", to_string(p.schedule)),
          set("plan.recompute", to_string(p.recompute)),
          set("plan.recompute_layers", std::to_string(p.recompute_layers)),
          set("plan.sequence_parallel", p.sequence_parallel ? "true" : "false"),
          set("plan.optimizer_sharding", to_string(p.optimizer_sharding)),
          set("plan.dp_shard", std::to_string(p.dp_shard)),
          set("plan.sync", to_string(p.sync)),
          set("plan.compression", to_string(p.compression)),
          set("plan.order", to_string(p.order)),
          set("training.global_batch", std::to_string(p.global_batch))};
}

}  // namespace parashift::core
