// Activation recompute in the executor: selective (the attention
// probabilities recomputed from qkv) and full (the layer's forward rerun
// from its input) train the same model bit for bit, keep exactly the
// activations they should, and full recompute repeats the tensor-parallel
// all-reduces of the forward.
#include <doctest/doctest.h>

#include "hw/comm/thread_communicator.hpp"
#include "hw/device/host_kernels.hpp"
#include "tests/hw/group_training.hpp"

using namespace parashift;

namespace {

core::ParallelPlan with(core::ParallelPlan plan, core::Recompute recompute,
                        core::Schedule schedule = core::Schedule::OneFOneB, int chunks = 1) {
  plan.recompute = recompute;
  plan.schedule = schedule;
  plan.virtual_stages = chunks;
  return plan;
}

}  // namespace

TEST_CASE("recompute trains the same model to the same losses, bit for bit") {
  // Recomputed tensors come from the same kernels on the same inputs as the
  // forward's, so backward sees the same bits.
  test::GroupRun run;
  run.job = "recompute";
  const auto pp2 = test::tiny_plan(1, 2, 1);
  const auto reference = test::train_threads(pp2, run);
  for (const auto recompute : {core::Recompute::Selective, core::Recompute::Full}) {
    CAPTURE(core::to_string(recompute));
    CHECK(test::train_threads(with(pp2, recompute), run) == reference);
    CHECK(test::train_threads(with(pp2, recompute, core::Schedule::Interleaved1F1B, 2), run) ==
          reference);
  }
  CHECK(test::train_threads(with(pp2, core::Recompute::Selective, core::Schedule::ZeroBubbleH1),
                            run) == reference);
  const auto tp2 = test::tiny_plan(2, 1, 1);
  CHECK(test::train_threads(with(tp2, core::Recompute::Full), run) ==
        test::train_threads(tp2, run));
}

TEST_CASE("recompute keeps less: the probabilities (selective), all but the input (full)") {
  // Tiny model, one sequence of 8 tokens per micro-batch, hidden 32, 4
  // heads: the probabilities are 4 x 8 x 8 floats = 1024 bytes; the layer
  // input 8 x 32 floats = 1024 bytes. pp 2 under 1F1B with 4 micro-batches:
  // stage 0 holds 2 micro-batches x 2 layers at its peak, stage 1 one x 2.
  // The workspace holds one copy of what the stashes drop (and, for full
  // recompute, the rerun forward's output, 1024 bytes), which the reported
  // peak counts: selective saves 4 x 1024 - 1024 bytes on stage 0.
  hw::HostKernels k;
  const hw::LayerShape shape{32, 4, 64, 1, test::kTinySeq, 1};
  const double none = static_cast<double>(hw::DeviceStash(k, shape).bytes());
  const double selective =
      static_cast<double>(hw::DeviceStash(k, shape, core::Recompute::Selective).bytes());
  const double full = static_cast<double>(hw::DeviceStash(k, shape, core::Recompute::Full).bytes());
  CHECK(none - selective == 4 * 8 * 8 * 4);
  CHECK(full == 8 * 32 * 4);
  const auto workspace = [&](core::Recompute mode) {
    return static_cast<double>(hw::DeviceWorkspace(k, shape, mode).bytes());
  };
  const double ws_none = workspace(core::Recompute::None);
  CHECK(workspace(core::Recompute::Selective) - ws_none == none - selective);
  CHECK(workspace(core::Recompute::Full) - ws_none == (none - full) + 8 * 32 * 4);
  const double sel_scratch = none - selective, full_scratch = (none - full) + 8 * 32 * 4;

  test::GroupRun run;
  run.iterations = 1;
  run.job = "recompute-mem";
  const auto pp2 = test::tiny_plan(1, 2, 1);
  std::vector<core::StepReport> a, b, c;
  test::train_threads(pp2, run, &a);
  test::train_threads(with(pp2, core::Recompute::Selective), run, &b);
  test::train_threads(with(pp2, core::Recompute::Full), run, &c);
  const auto& base = a.at(0).rank_peak_memory_bytes;
  const auto& sel = b.at(0).rank_peak_memory_bytes;
  const auto& all = c.at(0).rank_peak_memory_bytes;
  CHECK(base[0] - sel[0] == doctest::Approx(4 * (none - selective) - sel_scratch));
  CHECK(base[1] - sel[1] == doctest::Approx(2 * (none - selective) - sel_scratch));
  CHECK(base[0] - all[0] == doctest::Approx(4 * (none - full) - full_scratch));
  CHECK(base[1] - all[1] == doctest::Approx(2 * (none - full) - full_scratch));
}

TEST_CASE("full recompute repeats the forward's tensor-parallel all-reduces") {
  // Per layer and micro-batch: 2 all-reduces forward, 2 backward, and under
  // full recompute 2 more in backward's rerun of the forward: 6 / 4 the bytes.
  test::GroupRun run;
  run.iterations = 1;
  run.job = "recompute-tp";
  const auto tp2 = test::tiny_plan(2, 1, 1);
  std::vector<core::StepReport> none, full, selective;
  test::train_threads(tp2, run, &none);
  test::train_threads(with(tp2, core::Recompute::Full), run, &full);
  test::train_threads(with(tp2, core::Recompute::Selective), run, &selective);
  REQUIRE(test::comm_bytes(none.at(0), "tp[") > 0);
  CHECK(test::comm_bytes(full.at(0), "tp[") ==
        doctest::Approx(1.5 * test::comm_bytes(none.at(0), "tp[")));
  CHECK(test::comm_bytes(selective.at(0), "tp[") ==
        doctest::Approx(test::comm_bytes(none.at(0), "tp[")));
}
