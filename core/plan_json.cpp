#include "core/plan_json.hpp"

#include <nlohmann/json.hpp>

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
         {"sequence_parallel", p.sequence_parallel},
         {"optimizer_sharding", to_string(p.optimizer_sharding)},
         {"precision", to_string(p.precision)},
         {"sync", to_string(p.sync)},
         {"compression", to_string(p.compression)},
         {"order", to_string(p.order)}};
}

}  // namespace parashift::core
