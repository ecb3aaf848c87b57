#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "core/input_error.hpp"
#include "core/pipeline_schedule.hpp"

using namespace parashift;
using core::PassKind;
using core::PassOp;

namespace {
std::string render(const std::vector<PassOp>& ops) {
  std::string s;
  for (const auto& op : ops) {
    const char* kind = op.kind == PassKind::Forward    ? "F"
                       : op.kind == PassKind::Backward ? "B"
                                                       : "W";
    s += kind + std::to_string(op.micro_batch);
    if (op.chunk) s += "c" + std::to_string(op.chunk);
    s += " ";
  }
  return s;
}
}  // namespace

TEST_CASE("1F1B: warm-up of stages-stage-1 forwards, then alternate, then drain") {
  // 4 stages, 6 micro-batches. Stage 0 warms up with 3 forwards, stage 3 with none.
  CHECK(render(core::stage_schedule(core::Schedule::OneFOneB, 4, 0, 6, 1)) ==
        "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5 ");
  CHECK(render(core::stage_schedule(core::Schedule::OneFOneB, 4, 3, 6, 1)) ==
        "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 ");
  // Stage 1 of 4 with 2 micro-batches: warm-up min(4-1-1, 2) = 2, no steady state.
  CHECK(render(core::stage_schedule(core::Schedule::OneFOneB, 4, 1, 2, 1)) == "F0 F1 B0 B1 ");
}

TEST_CASE("GPipe runs every forward before any backward") {
  CHECK(render(core::stage_schedule(core::Schedule::GPipe, 2, 1, 3, 1)) == "F0 F1 F2 B0 B1 B2 ");
}

TEST_CASE("interleaved 1F1B follows Megatron's chunk order") {
  // 2 stages, 2 chunks, 4 micro-batches: virtual micro-batch k runs chunk (k/2)%2 on
  // micro-batch (k/4)*2 + k%2. Stage 0 warm-up: (2-0-1)*2 + (2-1)*2 = 4 forwards.
  const auto ops = core::stage_schedule(core::Schedule::Interleaved1F1B, 2, 0, 4, 2);
  CHECK(render(ops) == "F0 F1 F0c1 F1c1 F2 B0c1 F3 B1c1 F2c1 B0 F3c1 B1 B2c1 B3c1 B2 B3 ");
  // Each (micro-batch, chunk) appears once forward and once backward.
  CHECK(ops.size() == 16);
}

TEST_CASE("ZB-H1 defers stage s's weight passes by s micro-batches") {
  // 4 stages, 6 micro-batches, as the 1F1B case above. Warm-up is 1F1B's:
  // stages-stage-1 forwards. Stage s keeps up to s W's pending; once more are
  // pending, W of the oldest micro-batch follows its B. The rest run last.
  // Stage 0 keeps none: every B is followed by its own W.
  CHECK(render(core::stage_schedule(core::Schedule::ZeroBubbleH1, 4, 0, 6, 1)) ==
        "F0 F1 F2 F3 B0 W0 F4 B1 W1 F5 B2 W2 B3 W3 B4 W4 B5 W5 ");
  // Stage 1: warm-up F0 F1; after F2 B0 one W is pending (not > 1); after F3 B1
  // two are, so W0 runs; the drain keeps one pending, W5 runs last.
  CHECK(render(core::stage_schedule(core::Schedule::ZeroBubbleH1, 4, 1, 6, 1)) ==
        "F0 F1 F2 B0 F3 B1 W0 F4 B2 W1 F5 B3 W2 B4 W3 B5 W4 W5 ");
  // Stage 3 (last): no warm-up; W0 first runs after B3, when 4 > 3 are pending;
  // W3..W5 fill the 3 backward slots 1F1B's last stage idles at the end.
  CHECK(render(core::stage_schedule(core::Schedule::ZeroBubbleH1, 4, 3, 6, 1)) ==
        "F0 B0 F1 B1 F2 B2 F3 B3 W0 F4 B4 W1 F5 B5 W2 W3 W4 W5 ");
}

TEST_CASE("ZB-H1 runs every pass once and keeps 1F1B's peak of in-flight micro-batches") {
  // A micro-batch's activations live from its F to its W. Under 1F1B stage s
  // holds at most min(m, stages - s); ZB-H1 adds its s pending W's, so the
  // peak over stages stays `stages` (reached on every stage when m is large).
  const int stages = 4;
  const int micro_batches = 8;
  for (int s = 0; s < stages; ++s) {
    const auto ops =
        core::stage_schedule(core::Schedule::ZeroBubbleH1, stages, s, micro_batches, 1);
    CHECK(ops.size() == 3 * micro_batches);
    int live = 0;
    int peak = 0;
    for (const auto& op : ops) {
      if (op.kind == PassKind::Forward) peak = std::max(peak, ++live);
      if (op.kind == PassKind::BackwardWeight) --live;
    }
    CHECK(live == 0);
    CHECK(peak == stages);
  }
}

TEST_CASE("ZB-H1 with fewer micro-batches than pending slots defers every W to the end") {
  // Stage 3 of 4 may keep 3 W's pending; with 2 micro-batches it never has to run one early.
  CHECK(render(core::stage_schedule(core::Schedule::ZeroBubbleH1, 4, 3, 2, 1)) ==
        "F0 B0 F1 B1 W0 W1 ");
  CHECK_THROWS_AS(core::stage_schedule(core::Schedule::ZeroBubbleH1, 2, 0, 4, 2), core::InputError);
}

namespace {
std::string render_steps(const std::vector<std::vector<PassOp>>& steps) {
  std::string s;
  for (const auto& step : steps) s += (s.empty() ? "" : "| ") + render(step);
  return s;
}
}  // namespace

TEST_CASE("steps: interleaving pairs a forward with a backward, other schedules do not") {
  // 1F1B, ZB-H1, GPipe: one pass per step.
  CHECK(render_steps(core::stage_steps(core::Schedule::OneFOneB, 4, 2, 3, 1)) ==
        "F0 | F1 | B0 | F2 | B1 | B2 ");
  CHECK(render_steps(core::stage_steps(core::Schedule::ZeroBubbleH1, 2, 1, 2, 1)) ==
        "F0 | B0 | F1 | B1 | W0 | W1 ");
  CHECK(render_steps(core::stage_steps(core::Schedule::GPipe, 2, 0, 2, 1)) == "F0 | F1 | B0 | B1 ");
  // Interleaved (the case above): warm-up 4, then pairs, then the 4-pass drain.
  CHECK(render_steps(core::stage_steps(core::Schedule::Interleaved1F1B, 2, 0, 4, 2)) ==
        "F0 | F1 | F0c1 | F1c1 | F2 B0c1 | F3 B1c1 | F2c1 B0 | F3c1 B1 | B2c1 | B3c1 | B2 | B3 ");
  CHECK(core::warmup_forwards(core::Schedule::Interleaved1F1B, 2, 0, 4, 2) == 4);
  CHECK(core::warmup_forwards(core::Schedule::OneFOneB, 4, 1, 1, 1) == 1);  // capped by m
}

TEST_CASE("steps cover the schedule in order, for every schedule and stage") {
  for (const auto schedule : {core::Schedule::GPipe, core::Schedule::OneFOneB,
                              core::Schedule::Interleaved1F1B, core::Schedule::ZeroBubbleH1}) {
    const int v = schedule == core::Schedule::Interleaved1F1B ? 3 : 1;
    for (int stage = 0; stage < 4; ++stage) {
      std::vector<PassOp> flat;
      for (const auto& step : core::stage_steps(schedule, 4, stage, 8, v)) {
        // At most one forward and one backward.
        const auto count = [&](PassKind kind) {
          return std::count_if(step.begin(), step.end(),
                               [kind](const PassOp& op) { return op.kind == kind; });
        };
        CHECK(count(PassKind::Forward) <= 1);
        CHECK(count(PassKind::Backward) <= 1);
        flat.insert(flat.end(), step.begin(), step.end());
      }
      CHECK(flat == core::stage_schedule(schedule, 4, stage, 8, v));
    }
  }
}
