// The executor's compressed and hierarchical gradient sync on real ranks:
// four data-parallel replicas (threads), two to a "node" for hierarchical
// sync, trained 40 iterations on the tiny model with Adam. Compared with the
// flat uncompressed sync: the hierarchical sync without compression is the
// same sum in another order; each compressor sends fewer bytes and ends
// within the bound stated per case of the uncompressed run's final loss;
// flat, each sends the bytes its calls count (nccl-tests' sizes). Measured
// here (40 iterations): with SGD, PowerSGD rank 8 ends +0.39% and top-k 0.3
// +0.21% from uncompressed; with Adam (a loss 80x lower), the same two end
// +217% and +109%: error feedback and Adam's per-coordinate scaling do not
// mix (the reason for 1-bit Adam, Tang et al. 2021), so only int8 (+0.12%)
// is checked under Adam.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "core/input_error.hpp"
#include "tests/hw/group_training.hpp"

using namespace parashift;

namespace {

constexpr int kIterations = 40;

struct Trained {
  std::vector<double> losses;
  double dp_bytes = 0;  // rank 0's, summed over iterations
};

Trained train(const char* sync, const char* compression,
              hw::OptimizerKind optimizer = hw::OptimizerKind::Adam) {
  auto plan = test::tiny_plan(1, 1, 4);
  plan.sync = core::parse_sync_mode(sync);
  plan.compression = core::parse_compression(compression);
  test::GroupRun run;
  run.iterations = kIterations;
  run.ranks_per_node = 2;
  run.optimizer = optimizer;
  run.job = std::string("compression-") + sync + "-" + compression;
  std::vector<core::StepReport> reports;
  Trained t;
  t.losses = test::train_threads(plan, run, &reports);
  for (const auto& r : reports) t.dp_bytes += test::comm_bytes(r, "dp[");
  return t;
}

double relative(double a, double b) {
  return std::fabs(a - b) / std::fabs(b);
}

}  // namespace

TEST_CASE("compressed and hierarchical gradient sync train on real ranks") {
  using hw::OptimizerKind;
  const Trained sgd = train("flat", "none", OptimizerKind::Sgd);
  const Trained adam = train("flat", "none", OptimizerKind::Adam);
  REQUIRE(sgd.losses.size() == static_cast<std::size_t>(kIterations));
  // The uncompressed runs learn: the last loss is below the first.
  CHECK(sgd.losses.back() < sgd.losses.front());
  CHECK(adam.losses.back() < adam.losses.front());
  SUBCASE("hierarchical without compression: the same sums in another order") {
    const Trained h = train("hierarchical", "none", OptimizerKind::Adam);
    for (int i = 0; i < kIterations; ++i) CHECK(relative(h.losses[i], adam.losses[i]) < 1e-4);
  }
  struct Case {
    const char* sync;
    const char* compression;
    OptimizerKind optimizer;
    double bound;  // on the final loss, relative to the uncompressed run's
  };
  for (const Case c : {Case{"flat", "powersgd:8", OptimizerKind::Sgd, 0.01},
                       Case{"hierarchical", "powersgd:8", OptimizerKind::Sgd, 0.01},
                       Case{"flat", "topk:0.3", OptimizerKind::Sgd, 0.01},
                       Case{"flat", "int8", OptimizerKind::Sgd, 0.01},
                       Case{"flat", "int8", OptimizerKind::Adam, 0.01},
                       Case{"hierarchical", "int8", OptimizerKind::Adam, 0.01}}) {
    CAPTURE(c.sync);
    CAPTURE(c.compression);
    const Trained& base = c.optimizer == OptimizerKind::Sgd ? sgd : adam;
    const Trained t = train(c.sync, c.compression, c.optimizer);
    std::printf("%-4s %-12s %-10s final loss %.6f (uncompressed %.6f, %+.3f%%), dp bytes %.3gx\n",
                c.optimizer == OptimizerKind::Sgd ? "sgd" : "adam", c.sync, c.compression,
                t.losses.back(), base.losses.back(),
                100 * (t.losses.back() / base.losses.back() - 1), t.dp_bytes / base.dp_bytes);
    // Lossy: the trajectory differs from the uncompressed one somewhere.
    bool differs = false;
    for (int i = 0; i < kIterations; ++i) differs |= relative(t.losses[i], base.losses[i]) > 1e-6;
    CHECK(differs);
    CHECK(relative(t.losses.back(), base.losses.back()) < c.bound);
  }
}

TEST_CASE("flat compressed syncs send the bytes sync_calls counts") {
  // Per iteration, per layer, the four matrices of the tiny model (hidden
  // 32, ffn 64, tp 1): 32 x 96, 32 x 32, 32 x 64, 64 x 32, 8,192 elements,
  // 4 layers. Uncompressed: an all-reduce of 4 B each, 131,072 B.
  // powersgd:8: P and Q of (rows + cols) x 8 floats: (128 + 64 + 96 + 96)
  // x 8 x 4 B = 12,288 B a layer, 49,152 B: 2.67x fewer.
  // int8:256 on 4 ranks: each matrix padded to 4 x 256-element shards
  // (3,072 -> 3,072; 1,024; 2,048; 2,048), codes + scales twice:
  // 2 x (8,192 + 4 x 32) B a layer = 16,640 B, 66,560 B: 1.97x fewer.
  const Trained none = train("flat", "none", hw::OptimizerKind::Sgd);
  CHECK(none.dp_bytes == kIterations * 131072.0);
  CHECK(train("flat", "powersgd:8", hw::OptimizerKind::Sgd).dp_bytes == kIterations * 49152.0);
  CHECK(train("flat", "int8", hw::OptimizerKind::Sgd).dp_bytes == kIterations * 66560.0);
}

TEST_CASE("the sync module's re-plan applies live on the executor") {
  // Flat uncompressed until iteration 5, int8 from then on (as the `sync`
  // module decides it): the first 5 losses are the uncompressed run's bit
  // for bit, and the run ends within 1% of it (int8 alone: +0.12%, above).
  const auto plan = test::tiny_plan(1, 1, 4);
  test::GroupRun run;
  run.iterations = kIterations;
  run.job = "compression-replan";
  const auto flat = test::train_threads(plan, run);
  run.before = [&](hw::HwBackend& backend, int i) {
    if (i != 5) return;
    core::ParallelPlan next = plan;
    next.compression = core::parse_compression("int8");
    backend.apply({core::ReplanDirective{next}, "test", 0});
    // The next step runs the new plan (the JobRunner passes it).
  };
  std::vector<core::StepReport> reports;
  const auto switched = test::train_threads(plan, run, &reports);
  for (int i = 0; i < 5; ++i) CHECK(switched[i] == flat[i]);
  CHECK(relative(switched.back(), flat.back()) < 0.01);
  bool differs = false;
  for (int i = 5; i < kIterations; ++i) differs |= switched[i] != flat[i];
  CHECK(differs);
}

TEST_CASE("a re-plan of the sync and the layout at once is checked as a whole on the executor") {
  // dp4 -> int8 with micro-batch 2: the layout changes too (a live re-plan,
  // replan_test.cpp), and the 4 sequences of the global batch do not fill
  // 4 replicas x 2: refused before anything moves, the field named.
  const auto plan = test::tiny_plan(1, 1, 4);
  test::GroupRun run;
  run.iterations = 2;
  run.job = "compression-replan-refused";
  run.before = [&](hw::HwBackend& backend, int i) {
    if (i != 1) return;
    core::ParallelPlan next = plan;
    next.compression = core::parse_compression("int8");
    next.micro_batch = 2;
    CHECK_THROWS_WITH_AS(
        backend.apply({core::ReplanDirective{next}, "test", 0}),
        doctest::Contains("plan.global_batch: 4 is not divisible by dp*micro_batch=8"),
        core::InputError);
    CHECK(backend.plan().label() == plan.label());
  };
  CHECK(test::train_threads(plan, run).size() == 2);
}

TEST_CASE("the compressor's error feedback goes into snapshots and comes back with a restore") {
  // int8 on 4 ranks: snapshot before iteration 3, restore it before
  // iteration 5, so iterations 5 and 6 redo 3 and 4. With the residuals in
  // the shards they redo them bit for bit; had the restore kept the
  // residuals of iteration 4, iteration 5's gradient would carry them.
  const auto plan = [] {
    auto p = test::tiny_plan(1, 1, 4);
    p.compression = core::parse_compression("int8:16");
    return p;
  }();
  test::GroupRun run;
  run.iterations = 7;
  run.job = "compression-snapshot";
  run.before = [](hw::HwBackend& backend, int i) {
    if (i == 3) backend.apply({core::SnapshotDirective{1}, "test", 0});
    if (i == 5) backend.apply({core::RestoreDirective{1}, "test", 0});
  };
  const auto losses = test::train_threads(plan, run);
  REQUIRE(losses.size() == 7);
  CHECK(losses[5] == losses[3]);
  CHECK(losses[6] == losses[4]);
  CHECK(losses[4] != losses[3]);
}

TEST_CASE("delayed sync applies each iteration the previous one's gradient") {
  // SGD, so a zero update leaves the weights exactly (Adam's step count
  // would not). Iteration 0 applies nothing: loss 1 = loss 0. Iteration 1
  // applies iteration 0's gradient, taken at the same weights as the
  // hierarchical run's first: loss 2 = its loss 1, bit for bit (same sums).
  const auto train_sgd = [](const char* sync) {
    auto plan = test::tiny_plan(1, 1, 4);
    plan.sync = core::parse_sync_mode(sync);
    test::GroupRun run;
    run.iterations = kIterations;
    run.ranks_per_node = 2;
    run.optimizer = hw::OptimizerKind::Sgd;
    run.job = std::string("compression-") + sync;
    return test::train_threads(plan, run);
  };
  const auto h = train_sgd("hierarchical");
  const auto d = train_sgd("delayed");
  CHECK(d[1] == d[0]);
  CHECK(d[2] == h[1]);
  CHECK(d[3] != h[2]);  // from here on a step behind, with stale gradients
  std::printf("delayed: final loss %.6f, hierarchical %.6f (%+.3f%%)\n", d.back(), h.back(),
              100 * (d.back() / h.back() - 1));
  CHECK(relative(d.back(), h.back()) < 0.05);
}
