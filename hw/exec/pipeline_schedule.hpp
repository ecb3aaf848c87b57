// The order in which one pipeline stage runs its micro-batches' forward and
// backward passes. 1F1B (PipeDream-Flush / Megatron's non-interleaved
// schedule): stage s of p first runs min(p-1-s, m) forwards, then alternates
// one forward and one backward, then drains the remaining backwards, so at
// most p-s activations are stashed. GPipe: all forwards, then all backwards.
#pragma once

#include <vector>

#include "core/parallel_plan.hpp"

namespace parashift::hw {

struct PipelineOp {
  bool forward = true;
  int micro_batch = 0;  // index among this replica's micro-batches
  bool operator==(const PipelineOp&) const = default;
};

/// Throws core::InputError for schedules the executor does not run
/// (interleaved 1F1B, zero-bubble).
std::vector<PipelineOp> stage_schedule(core::Schedule schedule, int stage, int stages,
                                       int micro_batches);

}  // namespace parashift::hw
