// Sequence parallelism in the executor (Megatron-LM's, Korthikanti et al.
// 2022): the activations between the GEMM blocks split by tokens over the
// tensor-parallel group, all-gathers before the column-parallel GEMMs and
// reduce-scatters after the row-parallel ones.
#include <doctest/doctest.h>

#include "core/input_error.hpp"
#include "hw/comm/thread_communicator.hpp"
#include "tests/hw/group_training.hpp"

using namespace parashift;

namespace {

core::ParallelPlan sp(core::ParallelPlan plan) {
  plan.sequence_parallel = true;
  return plan;
}

}  // namespace

TEST_CASE("sequence parallelism trains the model tensor parallelism does") {
  // A reduce-scatter adds the ranks' partial sums in the same (rank) order
  // as the all-reduce it replaces, and the gathers move bits, so the weights
  // evolve identically; only the loss, summed per token shard and then over
  // the group in double, may differ in its last bits.
  test::GroupRun run;
  run.job = "sp";
  run.iterations = 4;
  for (const auto& base : {test::tiny_plan(2, 1, 1), test::tiny_plan(2, 2, 1)}) {
    auto variants = std::vector<core::ParallelPlan>{sp(base)};
    auto zb = sp(base);
    zb.schedule = core::Schedule::ZeroBubbleH1;
    auto full = sp(base);
    full.recompute = core::Recompute::Full;
    variants.push_back(zb);
    variants.push_back(full);
    if (base.pp == 2) {
      auto interleaved = sp(base);
      interleaved.schedule = core::Schedule::Interleaved1F1B;
      interleaved.virtual_stages = 2;
      variants.push_back(interleaved);
    }
    const auto reference = test::train_threads(base, run);
    for (const auto& plan : variants) {
      CAPTURE(plan.label());
      const auto losses = test::train_threads(plan, run);
      REQUIRE(losses.size() == reference.size());
      for (std::size_t i = 0; i < losses.size(); ++i)
        CHECK(losses[i] == doctest::Approx(reference[i]).epsilon(1e-12));
    }
  }
}

TEST_CASE("sequence parallelism halves the stashed residuals and the pipeline's messages") {
  // tp 2 x pp 2, 4 micro-batches, tiny model (8 tokens, hidden 32):
  // the stash's x and x1 (8 x 32 floats each, 1024 bytes) keep 4 rows of 8,
  // saving 1024 bytes per layer and micro-batch; stage 0 holds 2 micro-batches
  // x 2 layers at its peak (4096 bytes), stage 1 one x 2 (2048). The
  // workspace gains the gathered x and x1 (1024 bytes each, and again for
  // the weight pass) and three token shards (512 each): 5632 bytes, which at
  // this size outweigh the saving (at scale the stashes dominate).
  // Activations and gradients between stages shrink to a rank's 4 tokens:
  // half the bytes.
  test::GroupRun run;
  run.iterations = 1;
  run.job = "sp-mem";
  std::vector<core::StepReport> plain, split;
  const auto base = test::tiny_plan(2, 2, 1);
  test::train_threads(base, run, &plain);
  test::train_threads(sp(base), run, &split);
  const core::RankLayout layout(base);
  const auto& before = plain.at(0).rank_peak_memory_bytes;
  const auto& after = split.at(0).rank_peak_memory_bytes;
  for (int t = 0; t < 2; ++t) {
    const auto stage0 = static_cast<std::size_t>(layout.rank({t, 0, 0, 0}));
    const auto stage1 = static_cast<std::size_t>(layout.rank({t, 0, 0, 1}));
    CHECK(before[stage0] - after[stage0] == doctest::Approx(4096 - 5632));
    CHECK(before[stage1] - after[stage1] == doctest::Approx(2048 - 5632));
  }
  CHECK(test::comm_bytes(split.at(0), "pp[") ==
        doctest::Approx(0.5 * test::comm_bytes(plain.at(0), "pp[")));
  // Per layer and micro-batch, tensor parallelism all-reduces 4 buffers of
  // 1024 bytes; sequence parallelism all-gathers 2 and reduce-scatters 2
  // forward, and backward gathers 4 (dy, dx1, and x and x1 again for the
  // weight gradients) and reduce-scatters 2: 10 whole buffers.
  CHECK(test::comm_bytes(split.at(0), "tp[") ==
        doctest::Approx(10.0 / 4.0 * test::comm_bytes(plain.at(0), "tp[")));
  // Full recompute reruns the forward's 2 gathers and 2 scatters, whose
  // gathered x and x1 then serve the weight pass: 12 buffers, not 14.
  std::vector<core::StepReport> rerun;
  auto full = sp(base);
  full.recompute = core::Recompute::Full;
  test::train_threads(full, run, &rerun);
  CHECK(test::comm_bytes(rerun.at(0), "tp[") ==
        doctest::Approx(12.0 / 4.0 * test::comm_bytes(plain.at(0), "tp[")));
}

TEST_CASE("sequence parallelism needs a micro-batch's tokens to split over tp") {
  // 6 tokens over tp 4: refused before any training, on every rank.
  test::GroupRun run;
  run.job = "sp-bad";
  run.seq_len = 6;
  CHECK_THROWS_WITH_AS(test::train_threads(sp(test::tiny_plan(4, 1, 1)), run),
                       "plan.sequence_parallel: the 6 tokens of a micro-batch do not split over "
                       "tp=4 (the hw executor does not run it)",
                       core::InputError);
}
