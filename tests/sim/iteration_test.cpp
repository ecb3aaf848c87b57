#include <doctest/doctest.h>

#include <stdexcept>
#include <vector>

#include "core/scenario/cluster_view.hpp"
#include "sim/collective.hpp"
#include "sim/iteration.hpp"
#include "test_topologies.hpp"

using namespace parashift;

namespace {

core::ModelSpec model_with_layers(int layers) {
  return test::synthetic_model(layers);
}

// Compute only: 0.5 ms forward and 1 ms backward per layer, no communication,
// no embedding/head work, no optimizer time.
core::WorkProfile synthetic_profile() {
  core::WorkProfile p;
  p.layer.forward_ns = 500'000;
  p.layer.backward_ns = 1'000'000;
  return p;
}

sim::IterationResult run(const core::ModelSpec& m, const core::ParallelPlan& plan,
                         const core::WorkProfile& profile, const topo::Topology& t) {
  static const core::DeviceSpec device = core::device_preset("h100-sxm-80gb");
  sim::IterationInput in;
  in.model = &m;
  in.device = &device;
  in.plan = &plan;
  in.seq_len = 1024;
  const sim::PathModel paths(t);
  return sim::simulate_iteration(in, profile, paths);
}

}  // namespace

TEST_CASE("1F1B without communication: (m + p - 1)(t_f + t_b)") {
  const auto t = test::star(4, 100e9, 1'000);
  const auto m = model_with_layers(8);  // 2 layers per stage: t_f = 1 ms, t_b = 2 ms
  core::ParallelPlan plan;
  plan.pp = 4;
  plan.global_batch = 8;  // 8 micro-batches of 1
  const auto r = run(m, plan, synthetic_profile(), t);
  // (8 + 4 - 1) * 3 ms = 33 ms; each stage idles (p - 1)(t_f + t_b) = 9 ms.
  CHECK(r.iteration_ns == 33'000'000);
  for (const auto& w : r.workers) CHECK(w.bubble_ns == 9'000'000);
  CHECK(r.bubble_share == doctest::Approx(9.0 / 33.0));
}

TEST_CASE("GPipe has the same bubble as 1F1B but holds every micro-batch") {
  const auto t = test::star(4, 100e9, 1'000);
  const auto m = model_with_layers(8);
  core::ParallelPlan plan;
  plan.pp = 4;
  plan.global_batch = 8;
  const auto one_f = run(m, plan, synthetic_profile(), t);
  plan.schedule = core::Schedule::GPipe;
  const auto gpipe = run(m, plan, synthetic_profile(), t);
  CHECK(gpipe.iteration_ns == 33'000'000);
  // Stage 0 keeps all 8 micro-batches' activations under GPipe, p = 4 under 1F1B.
  CHECK(gpipe.workers[0].peak_activation_bytes ==
        doctest::Approx(2.0 * one_f.workers[0].peak_activation_bytes));
}

TEST_CASE("interleaving divides the bubble by the number of chunks") {
  const auto t = test::star(4, 100e9, 1'000);
  const auto m = model_with_layers(16);  // 2 chunks of 2 layers per stage
  core::ParallelPlan plan;
  plan.pp = 4;
  plan.virtual_stages = 2;
  plan.schedule = core::Schedule::Interleaved1F1B;
  plan.global_batch = 8;
  const auto r = run(m, plan, synthetic_profile(), t);
  // Per stage t_f = 2 ms, t_b = 4 ms; work 8 * 6 = 48 ms; bubble (p-1)(t_f+t_b)/v = 9 ms.
  CHECK(r.iteration_ns == 57'000'000);
}

TEST_CASE("ZB-H1 fills the drain with weight-gradient passes") {
  const auto t = test::star(4, 100e9, 1'000);
  const auto m = model_with_layers(8);  // 2 layers per stage
  core::ParallelPlan plan;
  plan.pp = 4;
  plan.global_batch = 8;
  plan.schedule = core::Schedule::ZeroBubbleH1;
  auto profile = synthetic_profile();
  // Per stage t_F = 1 ms, B (input gradient) = 1 ms, W (weight gradient) = 1 ms.
  profile.layer.backward_input_ns = 500'000;
  const auto r = run(m, plan, profile, t);
  // Work 8 x 3 ms = 24 ms; ZB-H1's bubble (p-1)(t_F + t_B - t_W) = 3 x 1 ms:
  // 27 ms against 1F1B's (8 + 3) x 3 = 33 ms.
  CHECK(r.iteration_ns == 27'000'000);
  for (const auto& w : r.workers) CHECK(w.compute_ns == 24'000'000);
}

TEST_CASE("pipeline sends add their transfer time on the critical path") {
  const auto t = test::star(4, 100e9, 1'000);
  const auto m = model_with_layers(8);
  core::ParallelPlan plan;
  plan.pp = 4;
  plan.global_batch = 8;
  auto profile = synthetic_profile();
  profile.pp_activation_bytes = 100e6;  // 1 ms at 100 GB/s + 2 us latency per hop
  const auto r = run(m, plan, profile, t);
  // Fill and drain cross 3 boundaries each way: 6 sends of 1.002 ms beyond 33 ms at least.
  CHECK(r.iteration_ns >= 33'000'000 + 6 * 1'002'000);
}

TEST_CASE("a slow GPU stretches its stage and the whole pipeline") {
  const auto t = test::star(4, 100e9, 1'000);
  const auto m = model_with_layers(8);
  core::ParallelPlan plan;
  plan.pp = 4;
  plan.global_batch = 8;
  const core::DeviceSpec device = core::device_preset("h100-sxm-80gb");
  sim::IterationInput in;
  in.model = &m;
  in.device = &device;
  in.plan = &plan;
  in.seq_len = 1024;
  in.gpu_slowdown = {1.0, 2.0, 1.0, 1.0};
  const sim::PathModel paths(t);
  const auto r = sim::simulate_iteration(in, synthetic_profile(), paths);
  // Stage 1 runs at 2x: 2 ms forward, 4 ms backward; steady state paced by it:
  // at least 8 micro-batches * 6 ms = 48 ms of its own work plus fill/drain.
  CHECK(r.iteration_ns > 48'000'000);
  CHECK(r.workers[1].compute_ns == 8 * 6'000'000);
}

TEST_CASE("data-parallel gradient sync overlaps the last backward") {
  // 2 replicas of a 1-stage model on 2 GPUs; 1 layer of 1e6 params, 2 B grads.
  const auto t = test::star(2, 100e9, 1'000);
  const auto m = model_with_layers(1);
  core::ParallelPlan plan;
  plan.dp = 2;
  plan.global_batch = 4;  // 2 micro-batches per replica
  auto profile = synthetic_profile();
  profile.params_per_gpu_layer = 1e6;
  profile.grad_bytes_per_param = 2;
  const auto r = run(m, plan, profile, t);
  // Compute: 2 x (0.5 + 1) ms = 3 ms. One bucket (1e6 < 40e6 params) ready at the
  // end of the last backward: all-reduce 2 MB over 2 ranks as NCCL runs it
  // (core/cost/nccl_model.hpp): ring Simple at 0.82 x 100 GB/s, 2 MB -> 24'390 ns,
  // plus 8.4 us + 2 steps x (3.4 us + 2 us of wire) = 19.2 us: 43'590 ns, exposed.
  CHECK(r.iteration_ns == 3'000'000 + 43'590);
  CHECK(r.critical().dp_exposed_ns == 43'590);
  CHECK(r.exposed_comm_ns == 43'590);
}

namespace {

// FSDP over 2 replicas on a 2-GPU star (tp 1): one layer of 1e6 parameters,
// 2-byte gradients; 2 micro-batches per replica. `slowdown` for GPU 1.
sim::IterationResult run_fsdp(core::OptimizerSharding sharding, double slowdown,
                              std::vector<int> per_replica = {}) {
  const auto t = test::star(2, 100e9, 1'000);
  const auto m = model_with_layers(1);
  const core::DeviceSpec device = core::device_preset("h100-sxm-80gb");
  core::ParallelPlan plan;
  plan.dp = 2;
  plan.global_batch = 4;
  plan.optimizer_sharding = sharding;
  auto profile = synthetic_profile();
  profile.params_per_gpu_layer = 1e6;
  profile.grad_bytes_per_param = 2;
  sim::IterationInput in;
  in.model = &m;
  in.device = &device;
  in.plan = &plan;
  in.seq_len = 1024;
  in.gpu_slowdown = {1.0, slowdown};
  in.micro_batches_per_replica = std::move(per_replica);
  const sim::PathModel paths(t);
  return sim::simulate_iteration(in, profile, paths);
}

}  // namespace

TEST_CASE("FSDP: every pass gathers its layer over the data-parallel group") {
  const auto r = run_fsdp(core::OptimizerSharding::Fsdp, 1.0);
  // The collectives as the simulator times them (sim/collective.hpp): the
  // layer's 2 MB of bf16 weights gathered, its 2 MB of gradients scattered.
  const auto t = test::star(2, 100e9, 1'000);
  const sim::PathModel paths(t);
  const auto fabric =
      core::cluster_view_of(paths.topology(), core::device_preset("h100-sxm-80gb")).nccl;
  const core::TimeNs ag =
      sim::ring_collective_ns(paths, fabric, core::CollectiveKind::AllGather, 2e6, {0, 1});
  const core::TimeNs rs =
      sim::ring_collective_ns(paths, fabric, core::CollectiveKind::ReduceScatter, 2e6, {0, 1});
  REQUIRE(ag > 0);
  REQUIRE(rs > 0);
  // One layer per pass hides nothing: each forward waits for its gather,
  // each backward for its reduce-scatter (core/cost/fsdp.hpp). 2 micro-batches
  // x (0.5 + 1 ms) of compute, no bucket sync at the end.
  CHECK(r.iteration_ns == 2 * (1'500'000 + ag + rs));
  CHECK(r.critical().dp_exposed_ns == 2 * (ag + rs));
  CHECK(r.critical().param_gather_ns == 0);  // no gather after the step: the next forward's
  // The group's stream carried 2 x (a gather forward, a gather and a scatter backward).
  CHECK(r.dp_sync_ns == 2 * (2 * ag + rs));
}

TEST_CASE("FSDP: a slow replica holds its peers at every pass, not only at the sync") {
  // GPU 1 at 2x: its forward 1 ms, backward 2 ms.
  const auto fsdp = run_fsdp(core::OptimizerSharding::Fsdp, 2.0);
  const auto zero1 = run_fsdp(core::OptimizerSharding::Distributed, 2.0);
  // Distributed optimizer: the healthy replica runs its 2 x 1.5 ms alone and
  // then waits at the gradient sync.
  CHECK(zero1.workers[0].last_pass_end_ns == 3'000'000);
  CHECK(zero1.workers[1].last_pass_end_ns == 6'000'000);
  // FSDP: every pass starts when both replicas reach it, so the healthy one
  // ends its last backward 2 - 1 = 1 ms before the slow one (same exposure).
  CHECK(fsdp.workers[1].last_pass_end_ns > 6'000'000);
  CHECK(fsdp.workers[0].last_pass_end_ns == fsdp.workers[1].last_pass_end_ns - 1'000'000);
}

TEST_CASE("FSDP refuses replicas with different micro-batch counts") {
  // Each pass gathers over the whole group: a replica with more passes would wait forever.
  CHECK_THROWS_WITH_AS(run_fsdp(core::OptimizerSharding::Fsdp, 1.0, {3, 1}),
                       doctest::Contains("FSDP needs the same micro-batches on every replica"),
                       std::invalid_argument);
  CHECK_NOTHROW(run_fsdp(core::OptimizerSharding::Distributed, 1.0, {3, 1}));
}
