// Pipeline schedules: the order in which one pipeline stage runs the forward
// and backward passes of its micro-batches (GPipe, 1F1B, interleaved 1F1B as
// in Megatron-LM's schedules.py; zero-bubble ZB-H1 as in Qi et al. 2023).
#pragma once

#include <vector>

#include "core/parallel_plan.hpp"

namespace parashift::core {

/// Backward is the whole backward pass, except under ZB-H1, where it is the
/// input-gradient half (B) and BackwardWeight (W) the weight-gradient half.
enum class PassKind { Forward, Backward, BackwardWeight };

struct PassOp {
  PassKind kind = PassKind::Forward;
  int micro_batch = 0;
  int chunk = 0;  // local model chunk on this stage, 0..virtual_stages-1
  friend bool operator==(const PassOp&, const PassOp&) = default;
};

/// The op order of pipeline stage `stage` for `micro_batches` micro-batches.
/// ZB-H1 (virtual_stages must be 1): the 1F1B warm-up of stages-stage-1
/// forwards, then F/B pairs in which stage s keeps up to s weight passes
/// pending (W of the oldest micro-batch runs once more than s are pending),
/// then the drain's B/W pairs and the s deferred W's last: they fill the
/// s backward-pass slots stage s would idle at the end of 1F1B, and the
/// in-flight activations (freed by W) never exceed 1F1B's peak of `stages`.
std::vector<PassOp> stage_schedule(Schedule schedule, int stages, int stage, int micro_batches,
                                   int virtual_stages);

/// Forwards stage `stage` runs before its first backward: 1F1B's and ZB-H1's
/// stages-stage-1, interleaving's (stages-stage-1)*2 + (v-1)*stages,
/// GPipe's all (at most every forward).
int warmup_forwards(Schedule schedule, int stages, int stage, int micro_batches,
                    int virtual_stages);

/// stage_schedule cut into the steps Megatron-LM's p2p communication runs.
/// Interleaved 1F1B with several chunks: each warm-up forward alone, then
/// each forward with the backward after it (the steady state), then each
/// remaining backward alone. Every other schedule: one pass per step (as
/// Megatron's non-interleaved 1F1B exchanges pass by pass). A step receives
/// all its inputs at once, before its passes, and its outputs go out with
/// the next step's receives. On rendezvous point-to-point (NCCL: a send
/// completes when its receiver posts) this cannot deadlock; taking
/// interleaving's inputs pass by pass does (tests/hw/rendezvous_test.cpp).
/// Pairing costs overlap (the forward waits for the backward's input), so
/// the other schedules, which do not need it, keep their passes apart.
std::vector<std::vector<PassOp>> stage_steps(Schedule schedule, int stages, int stage,
                                             int micro_batches, int virtual_stages);

/// Global (virtual) stage index of local chunk `chunk` on `stage`: chunk k of
/// stage s holds virtual stage k*stages + s (Megatron's interleaving).
inline int virtual_stage(int stages, int stage, int chunk) {
  return chunk * stages + stage;
}

}  // namespace parashift::core
