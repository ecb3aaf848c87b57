#include <doctest/doctest.h>

#include "core/input_error.hpp"
#include "hw/exec/pipeline_schedule.hpp"
#include "hw/exec/work_split.hpp"

using namespace parashift;
using hw::PipelineOp;

TEST_CASE("1F1B: warm-up of p-1-s forwards, then one forward one backward, then drain") {
  // Stage 0 of 4 with 4 micro-batches: warm-up 3 (F0 F1 F2), steady 1 (F3 B0), drain B1 B2 B3.
  const std::vector<PipelineOp> stage0{{true, 0},  {true, 1},  {true, 2},  {true, 3},
                                       {false, 0}, {false, 1}, {false, 2}, {false, 3}};
  CHECK(hw::stage_schedule(core::Schedule::OneFOneB, 0, 4, 4) == stage0);
  // Last stage: no warm-up, strictly alternating.
  const std::vector<PipelineOp> stage3{{true, 0}, {false, 0}, {true, 1}, {false, 1},
                                       {true, 2}, {false, 2}, {true, 3}, {false, 3}};
  CHECK(hw::stage_schedule(core::Schedule::OneFOneB, 3, 4, 4) == stage3);
  // Stage 1 of 4 with 2 micro-batches: warm-up min(2, 2) = 2, no steady state.
  const std::vector<PipelineOp> short_run{{true, 0}, {true, 1}, {false, 0}, {false, 1}};
  CHECK(hw::stage_schedule(core::Schedule::OneFOneB, 1, 4, 2) == short_run);
}

TEST_CASE("GPipe runs every forward before any backward; interleaving is refused") {
  const std::vector<PipelineOp> gpipe{{true, 0}, {true, 1}, {false, 0}, {false, 1}};
  CHECK(hw::stage_schedule(core::Schedule::GPipe, 1, 2, 2) == gpipe);
  CHECK_THROWS_AS(hw::stage_schedule(core::Schedule::Interleaved1F1B, 0, 2, 4), core::InputError);
}

TEST_CASE("layer splits: even with the remainder on early stages, checked directives") {
  CHECK(hw::even_split(10, 4) == std::vector<int>{3, 3, 2, 2});
  CHECK(hw::offsets_of({3, 3, 2, 2}) == std::vector<int>{0, 3, 6, 8, 10});
  CHECK_NOTHROW(hw::check_split({1, 3}, 2, 4, 1, "x"));
  CHECK_THROWS_WITH_AS(hw::check_split({0, 4}, 2, 4, 1, "repartition"),
                       "repartition: expected 2 entries >= 1 summing to 4, found [0,4]",
                       core::InputError);
  CHECK_THROWS_AS(hw::check_split({2, 3}, 2, 4, 1, "x"), core::InputError);
}
