#include <doctest/doctest.h>

#include "core/cost/estimate.hpp"
#include "core/scenario/cluster_view.hpp"
#include "core/scenario/scenario.hpp"
#include "core/validation/published_run.hpp"
#include "test_models.hpp"

using namespace parashift::core;
using parashift::core::test::gpt3_175b;
using parashift::core::test::plan_175b;

namespace {

IterationEstimate run(const ParallelPlan& p, const CostOptions& o = CostOptions{}) {
  const DeviceSpec& d = device_preset("h100-sxm-80gb");
  return estimate_iteration(gpt3_175b(), d, published_cluster(d, p.gpus(), 8), p, 2048, o);
}

}  // namespace

TEST_CASE("estimate: total is the sum of its parts, MFU and tokens/s consistent") {
  const IterationEstimate e = run(plan_175b());
  CHECK(e.total_ns == e.forward_ns + e.backward_ns + e.recompute_ns + e.tp_comm_ns + e.cp_comm_ns +
                          e.pp_comm_ns + e.bubble_ns + e.dp_comm_exposed_ns + e.optimizer_ns);
  CHECK(e.mfu > 0.2);
  CHECK(e.mfu < 1.0);
  // tokens/s = 256 * 2048 / total seconds.
  CHECK(e.tokens_per_s == doctest::Approx(256.0 * 2048.0 / ns_to_s(e.total_ns)));
  CHECK(e.dp_comm_exposed_ns <= e.dp_comm_ns);
}

TEST_CASE("estimate: pipeline bubble (p-1)(t_f+t_b), divided by v when interleaved") {
  ParallelPlan p = plan_175b();
  const IterationEstimate plain = run(p);
  // 1F1B: bubble = (p-1)/m of the steady state = 7/64.
  const double steady =
      static_cast<double>(plain.forward_ns + plain.backward_ns + plain.recompute_ns +
                          plain.tp_comm_ns + plain.cp_comm_ns);
  CHECK(static_cast<double>(plain.bubble_ns) == doctest::Approx(steady * 7.0 / 64.0).epsilon(0.01));
  p.schedule = Schedule::Interleaved1F1B;
  p.virtual_stages = 3;  // 96 layers / 24 chunks = 4 each, same stage load
  const IterationEstimate inter = run(p);
  CHECK(static_cast<double>(inter.bubble_ns) ==
        doctest::Approx(static_cast<double>(plain.bubble_ns) / 3.0).epsilon(0.01));
  p.schedule = Schedule::ZeroBubbleH1;
  p.virtual_stages = 1;
  CHECK(run(p).bubble_ns < plain.bubble_ns);
}

TEST_CASE("estimate: gradient reduce overlap hides part of the DP sync") {
  ParallelPlan p = plan_175b();
  CostOptions overlap;
  CostOptions serial;
  serial.overlap_grad_reduce = false;
  serial.overlap_param_gather = false;
  const IterationEstimate a = run(p, overlap);
  const IterationEstimate b = run(p, serial);
  CHECK(b.dp_comm_exposed_ns == b.dp_comm_ns);
  CHECK(a.dp_comm_exposed_ns < b.dp_comm_exposed_ns);
  CHECK(a.total_ns < b.total_ns);
}

TEST_CASE("estimate: TP overlap exposes at most the unhidden share") {
  ParallelPlan p = plan_175b();
  p.sequence_parallel = true;
  CostOptions on;
  on.tp_comm_overlap = true;
  const IterationEstimate a = run(p);
  const IterationEstimate b = run(p, on);
  CHECK(b.tp_comm_ns < a.tp_comm_ns);
  CHECK(static_cast<double>(b.tp_comm_ns) >= 0.49 * static_cast<double>(a.tp_comm_ns));
}

TEST_CASE("estimate: the power-capped H100 is slower than the 700 W part") {
  const ParallelPlan p = plan_175b();
  const DeviceSpec& full = device_preset("h100-sxm-80gb");
  const DeviceSpec& capped = device_preset("h100-96gb-500w");
  const auto cluster = published_cluster(full, p.gpus(), 8);
  CHECK(estimate_iteration(gpt3_175b(), capped, cluster, p, 2048).total_ns >
        estimate_iteration(gpt3_175b(), full, cluster, p, 2048).total_ns);
  for (const auto& name : device_preset_names()) {
    CHECK_NOTHROW(device_preset(name).validate());
  }
}

TEST_CASE("estimate: FSDP gathers and reduce-scatters every micro-batch") {
  ParallelPlan p = plan_175b();  // tp8 pp8 dp4, m = 256 / 4 = 64 micro-batches
  p.optimizer_sharding = OptimizerSharding::Fsdp;
  const DeviceSpec& d = device_preset("h100-sxm-80gb");
  const ClusterView c = published_cluster(d, p.gpus(), 8);
  const WorkProfile w = work_profile(gpt3_175b(), d, p, 2048);
  const IterationEstimate e = estimate_iteration(gpt3_175b(), d, c, p, w, CostOptions{});
  // Stage 0: 12 layers; per micro-batch each layer is gathered twice (2 B per
  // parameter) and its gradients reduce-scattered once (2 B), plus the
  // embedding once more: dp_comm = 64 x (12 x (2 ag + rs) + 2 ag_e + rs_e).
  const double layer = w.params_per_gpu_layer;
  const double embed = w.params_per_gpu_embedding;
  const TimeNs ag = collective_ns(CollectiveKind::AllGather, 2.0 * layer, 4, 1, c);
  const TimeNs rs = collective_ns(CollectiveKind::ReduceScatter, 2.0 * layer, 4, 1, c);
  const TimeNs ag_e = collective_ns(CollectiveKind::AllGather, 2.0 * embed, 4, 1, c);
  const TimeNs rs_e = collective_ns(CollectiveKind::ReduceScatter, 2.0 * embed, 4, 1, c);
  CHECK(e.dp_comm_ns == 64 * (12 * (2 * ag + rs) + 2 * ag_e + rs_e));
  // At least the first gather and the last reduce-scatter of each micro-batch are exposed.
  CHECK(e.dp_comm_exposed_ns >= 64 * (ag + rs));
  CHECK(e.dp_comm_exposed_ns <= e.dp_comm_ns);
  // The distributed optimizer moves its gradients and weights once per iteration.
  p.optimizer_sharding = OptimizerSharding::Distributed;
  const IterationEstimate zero1 = run(p);
  CHECK(zero1.dp_comm_ns < e.dp_comm_ns / 10);
  CHECK(zero1.memory.total_bytes() > e.memory.total_bytes());
}

TEST_CASE("default scenario: FSDP and the distributed optimizer differ in time and in memory") {
  // The same plan with either sharding: FSDP holds 1/dp of the weights and
  // gradients but gathers every layer twice and reduce-scatters it once per
  // micro-batch; the distributed optimizer keeps weights and gradients whole
  // and moves them once per iteration. Memory and time describe one schedule.
  auto load = [](const char* sharding) {
    return load_scenario(PARASHIFT_SOURCE_DIR "/scenarios/default.yaml",
                         {std::string("plan.optimizer_sharding=") + sharding});
  };
  const Scenario fsdp = load("fsdp");
  const Scenario zero1 = load("distributed");
  auto estimate = [](const Scenario& s) {
    return estimate_iteration(s.model, s.device, cluster_view_of(s.topology, s.device), s.plan,
                              s.training.seq_len);
  };
  const IterationEstimate f = estimate(fsdp);
  const IterationEstimate z = estimate(zero1);
  CHECK(f.memory.total_bytes() < z.memory.total_bytes());
  CHECK(f.memory.weights_bytes < z.memory.weights_bytes / 4);
  CHECK(f.dp_comm_ns > 10 * z.dp_comm_ns);
  CHECK(f.total_ns > z.total_ns);
}
