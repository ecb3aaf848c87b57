#include <doctest/doctest.h>

#include <string>

#include "core/input_error.hpp"
#include "sim/schedule.hpp"

using namespace parashift;
using sim::PassKind;
using sim::PassOp;

namespace {
std::string render(const std::vector<PassOp>& ops) {
  std::string s;
  for (const auto& op : ops) {
    s += (op.kind == PassKind::Forward ? "F" : "B") + std::to_string(op.micro_batch);
    if (op.chunk) s += "c" + std::to_string(op.chunk);
    s += " ";
  }
  return s;
}
}  // namespace

TEST_CASE("1F1B: warm-up of stages-stage-1 forwards, then alternate, then drain") {
  // 4 stages, 6 micro-batches. Stage 0 warms up with 3 forwards, stage 3 with none.
  CHECK(render(sim::stage_schedule(core::Schedule::OneFOneB, 4, 0, 6, 1)) ==
        "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5 ");
  CHECK(render(sim::stage_schedule(core::Schedule::OneFOneB, 4, 3, 6, 1)) ==
        "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 ");
}

TEST_CASE("GPipe runs every forward before any backward") {
  CHECK(render(sim::stage_schedule(core::Schedule::GPipe, 2, 1, 3, 1)) == "F0 F1 F2 B0 B1 B2 ");
}

TEST_CASE("interleaved 1F1B follows Megatron's chunk order") {
  // 2 stages, 2 chunks, 4 micro-batches: virtual micro-batch k runs chunk (k/2)%2 on
  // micro-batch (k/4)*2 + k%2. Stage 0 warm-up: (2-0-1)*2 + (2-1)*2 = 4 forwards.
  const auto ops = sim::stage_schedule(core::Schedule::Interleaved1F1B, 2, 0, 4, 2);
  CHECK(render(ops) == "F0 F1 F0c1 F1c1 F2 B0c1 F3 B1c1 F2c1 B0 F3c1 B1 B2c1 B3c1 B2 B3 ");
  // Each (micro-batch, chunk) appears once forward and once backward.
  CHECK(ops.size() == 16);
}

TEST_CASE("zero-bubble is refused until the simulator runs it") {
  CHECK_THROWS_AS(sim::stage_schedule(core::Schedule::ZeroBubbleH1, 2, 0, 4, 1), core::InputError);
}
