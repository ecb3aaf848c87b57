#include "core/pipeline_schedule.hpp"

#include <algorithm>
#include "core/assert.hpp"
#include <string>

#include "core/input_error.hpp"

namespace parashift::core {

namespace {

std::vector<PassOp> gpipe(int micro_batches) {
  std::vector<PassOp> ops;
  for (int m = 0; m < micro_batches; ++m) ops.push_back({PassKind::Forward, m, 0});
  for (int m = 0; m < micro_batches; ++m) ops.push_back({PassKind::Backward, m, 0});
  return ops;
}

// Megatron's interleaved schedule, of which plain 1F1B is the v = 1 case:
// virtual micro-batch k runs chunk (k / stages) % v, reversed for backward,
// on micro-batch (k / (stages * v)) * stages + k % stages.
std::vector<PassOp> interleaved(int stages, int stage, int micro_batches, int v) {
  const int total = micro_batches * v;
  auto forward_op = [&](int k) {
    const int chunk = (k / stages) % v;
    const int mb = (k / (stages * v)) * stages + k % stages;
    return PassOp{PassKind::Forward, mb, chunk};
  };
  auto backward_op = [&](int k) {
    const int chunk = v - 1 - (k / stages) % v;
    const int mb = (k / (stages * v)) * stages + k % stages;
    return PassOp{PassKind::Backward, mb, chunk};
  };
  const int warmup = warmup_forwards(Schedule::Interleaved1F1B, stages, stage, micro_batches, v);
  std::vector<PassOp> ops;
  ops.reserve(2 * static_cast<std::size_t>(total));
  for (int k = 0; k < warmup; ++k) ops.push_back(forward_op(k));
  for (int k = 0; k < total - warmup; ++k) {
    ops.push_back(forward_op(warmup + k));
    ops.push_back(backward_op(k));
  }
  for (int k = total - warmup; k < total; ++k) ops.push_back(backward_op(k));
  return ops;
}

// ZB-H1 (Qi et al. 2023, "Zero Bubble Pipeline Parallelism", handcrafted
// schedule 1), as in their DeepSpeed ZeroBubbleH1Pipeline with exact
// semantics: B is the input gradient only; the W's of stage `stage` lag its
// B's by up to `stage` micro-batches, in micro-batch order.
std::vector<PassOp> zero_bubble_h1(int stages, int stage, int micro_batches) {
  const int warmup = warmup_forwards(Schedule::ZeroBubbleH1, stages, stage, micro_batches, 1);
  std::vector<PassOp> ops;
  ops.reserve(3 * static_cast<std::size_t>(micro_batches));
  int backward = 0;
  int weight = 0;
  auto backward_then_weight = [&] {
    ops.push_back({PassKind::Backward, backward++, 0});
    if (backward - weight > stage) ops.push_back({PassKind::BackwardWeight, weight++, 0});
  };
  for (int f = 0; f < warmup; ++f) ops.push_back({PassKind::Forward, f, 0});
  for (int f = warmup; f < micro_batches; ++f) {
    ops.push_back({PassKind::Forward, f, 0});
    backward_then_weight();
  }
  while (backward < micro_batches) backward_then_weight();
  while (weight < micro_batches) ops.push_back({PassKind::BackwardWeight, weight++, 0});
  return ops;
}

}  // namespace

int warmup_forwards(Schedule schedule, int stages, int stage, int micro_batches,
                    int virtual_stages) {
  const int total = micro_batches * virtual_stages;
  if (schedule == Schedule::GPipe) return micro_batches;
  if (virtual_stages == 1) return std::min(stages - stage - 1, total);
  return std::min((stages - stage - 1) * 2 + (virtual_stages - 1) * stages, total);
}

std::vector<std::vector<PassOp>> stage_steps(Schedule schedule, int stages, int stage,
                                             int micro_batches, int virtual_stages) {
  const auto ops = stage_schedule(schedule, stages, stage, micro_batches, virtual_stages);
  const bool pairs = schedule == Schedule::Interleaved1F1B && virtual_stages > 1;
  const auto warmup = static_cast<std::size_t>(
      warmup_forwards(schedule, stages, stage, micro_batches, virtual_stages));
  std::vector<std::vector<PassOp>> steps;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const PassOp& op = ops[i];
    // After the warm-up the ops alternate F B, then the drain's B's follow.
    const bool after_lone_forward =
        !steps.empty() && steps.back().size() == 1 && steps.back()[0].kind == PassKind::Forward;
    if (pairs && i > warmup && op.kind == PassKind::Backward && after_lone_forward) {
      steps.back().push_back(op);
    } else {
      steps.push_back({op});
    }
  }
  return steps;
}

std::vector<PassOp> stage_schedule(Schedule schedule, int stages, int stage, int micro_batches,
                                   int virtual_stages) {
  PARASHIFT_ASSERT(stage >= 0 && stage < stages && micro_batches > 0);
  switch (schedule) {
    case Schedule::GPipe:
      return gpipe(micro_batches);
    case Schedule::OneFOneB:
      return interleaved(stages, stage, micro_batches, 1);
    case Schedule::Interleaved1F1B:
      return interleaved(stages, stage, micro_batches, virtual_stages);
    case Schedule::ZeroBubbleH1:
      if (virtual_stages != 1) {
        throw InputError("plan.virtual_stages: zb_h1 runs one model chunk per stage, found " +
                         std::to_string(virtual_stages));
      }
      return zero_bubble_h1(stages, stage, micro_batches);
  }
  return {};
}

}  // namespace parashift::core
