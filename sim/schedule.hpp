// Pipeline schedules: the order in which one pipeline stage runs the forward
// and backward passes of its micro-batches (GPipe, 1F1B, interleaved 1F1B as
// in Megatron-LM's schedules.py).
#pragma once

#include <vector>

#include "core/parallel_plan.hpp"

namespace parashift::sim {

enum class PassKind { Forward, Backward };

struct PassOp {
  PassKind kind = PassKind::Forward;
  int micro_batch = 0;
  int chunk = 0;  // local model chunk on this stage, 0..virtual_stages-1
  friend bool operator==(const PassOp&, const PassOp&) = default;
};

/// The op order of pipeline stage `stage` for `micro_batches` micro-batches.
/// Throws core::InputError for a schedule the simulator does not run.
std::vector<PassOp> stage_schedule(core::Schedule schedule, int stages, int stage,
                                   int micro_batches, int virtual_stages);

/// Global (virtual) stage index of local chunk `chunk` on `stage`: chunk k of
/// stage s holds virtual stage k*stages + s (Megatron's interleaving).
inline int virtual_stage(int stages, int stage, int chunk) {
  return chunk * stages + stage;
}

}  // namespace parashift::sim
