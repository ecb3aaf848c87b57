#include "hw/exec/pipeline_schedule.hpp"

#include <algorithm>
#include <string>

#include "core/input_error.hpp"

namespace parashift::hw {

std::vector<PipelineOp> stage_schedule(core::Schedule schedule, int stage, int stages,
                                       int micro_batches) {
  std::vector<PipelineOp> ops;
  if (schedule == core::Schedule::GPipe) {
    for (int i = 0; i < micro_batches; ++i) ops.push_back({true, i});
    for (int i = 0; i < micro_batches; ++i) ops.push_back({false, i});
    return ops;
  }
  if (schedule != core::Schedule::OneFOneB)
    throw core::InputError(
        std::string("plan.schedule: the hw executor runs 1f1b or gpipe, found ") +
        core::to_string(schedule));
  const int warmup = std::min(stages - 1 - stage, micro_batches);
  for (int i = 0; i < warmup; ++i) ops.push_back({true, i});
  const int steady = micro_batches - warmup;
  for (int i = 0; i < steady; ++i) {
    ops.push_back({true, warmup + i});
    ops.push_back({false, i});
  }
  for (int i = steady; i < micro_batches; ++i) ops.push_back({false, i});
  return ops;
}

}  // namespace parashift::hw
