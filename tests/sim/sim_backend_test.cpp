#include <doctest/doctest.h>

#include <algorithm>

#include "core/cost/replan_cost.hpp"
#include "core/snapshot/rank_state.hpp"
#include "sim/sim_backend.hpp"
#include "test_topologies.hpp"

using namespace parashift;

namespace {

core::Scenario two_stage_scenario() {
  core::Scenario s;
  s.name = "two-stage";
  s.model = test::synthetic_model(8);
  s.device = core::device_preset("h100-sxm-80gb");
  s.topology = test::star(2, 100e9, 1'000);
  s.training.global_batch = 4;
  s.training.seq_len = 1024;
  s.plan.pp = 2;
  s.plan.global_batch = 4;
  s.run.contention = false;
  return s;
}

}  // namespace

TEST_CASE("a re-partition charges the state it moves to the next iteration only") {
  const core::Scenario s = two_stage_scenario();
  sim::SimBackend backend(s);
  core::WorkProfile p;
  p.layer.forward_ns = 1'000'000;
  p.layer.backward_ns = 2'000'000;
  p.params_per_gpu_layer = 1e8;
  backend.set_profile(p);
  const auto before = backend.step(s.plan).iteration_ns;
  // 4 + 4 layers -> 5 + 3: one layer crosses the stage boundary.
  backend.apply({core::RepartitionDirective{{5, 3}}, "test", 0});
  const auto moved = backend.step(s.plan).iteration_ns;
  const auto after = backend.step(s.plan).iteration_ns;
  // 1 layer x 1e8 params x 16 B = 1.6 GB at 100 GB/s = 16 ms, plus 2 x 1 us of latency.
  CHECK(moved - after == 16'002'000);
  // 4 micro-batches of (5 + 3) layers: the slower stage holds 5 layers of 3 ms.
  CHECK(after > before);
  CHECK(backend.layers_per_virtual_stage(s.plan) == std::vector<int>{5, 3});
}

TEST_CASE("a rebalance keeps the global batch and moves no state") {
  core::Scenario s = two_stage_scenario();
  s.plan.pp = 1;
  s.plan.dp = 2;
  sim::SimBackend backend(s);
  core::WorkProfile p;
  p.layer.forward_ns = 1'000'000;
  p.layer.backward_ns = 2'000'000;
  backend.set_profile(p);
  const auto even = backend.step(s.plan).iteration_ns;
  backend.apply({core::RebalanceDirective{{3, 1}}, "test", 0});
  const auto skewed = backend.step(s.plan).iteration_ns;
  // Even: 2 micro-batches x 8 layers x 3 ms = 48 ms per replica. Skewed: the
  // replica with 3 takes 72 ms, and the step waits for it.
  CHECK(even == 48'000'000);
  CHECK(skewed == 72'000'000);
  CHECK(backend.micro_batches_per_replica(s.plan) == std::vector<int>{3, 1});
  CHECK_THROWS_AS(backend.apply({core::RebalanceDirective{{3, 2}}, "bad", 0}), core::InputError);
}

TEST_CASE("a snapshot's copy hides under the next iteration, a restore's stalls it") {
  // One rank's state: the most loaded rank's parameters, gradients and
  // optimizer state (core::rank_state), copied at 50 GB/s (the default),
  // or at 1 Gb/s, 50 x 8 times slower.
  core::Scenario s = two_stage_scenario();
  s.faults.emplace();
  const double bytes = core::rank_state(s.model, s.plan, s.training.seq_len).total_bytes();
  REQUIRE(bytes > 0);
  for (const bool overlap : {true, false}) {
    for (const double Bps : {50e9, 1e9 / 8}) {
      CAPTURE(overlap);
      CAPTURE(Bps);
      s.faults->snapshot.overlap = overlap;
      s.faults->snapshot.host_copy_Bps = Bps;
      sim::SimBackend backend(s);
      core::WorkProfile p;
      p.layer.forward_ns = 1'000'000;
      p.layer.backward_ns = 2'000'000;
      backend.set_profile(p);
      CHECK(backend.capabilities().snapshots_to_host);
      const auto healthy = backend.step(s.plan).iteration_ns;
      // What the copy can hide under: the iteration before its optimizer
      // step (4 micro-batches x 4 layers x 3 ms of passes and the bubble).
      const core::TimeNs window = sim::snapshot_window_ns(backend.last_result());
      const core::TimeNs copy = core::transfer_ns(bytes, Bps);
      CHECK(window > 48'000'000);
      backend.apply({core::SnapshotDirective{1}, "test", 0});
      const auto stalled = backend.step(s.plan).iteration_ns;
      CHECK(backend.step(s.plan).iteration_ns == healthy);  // charged once
      // With overlap, 16 ms at 50 GB/s hides whole; 6.6 s at 1 Gb/s
      // stalls for all but the window. Without, the whole copy.
      CHECK(stalled - healthy == (overlap ? std::max<core::TimeNs>(0, copy - window) : copy));
      // A restore's copy must land before training resumes: always whole.
      backend.apply({core::RestoreDirective{1}, "test", 0});
      CHECK(backend.step(s.plan).iteration_ns - healthy == copy);
      CHECK_THROWS_AS(backend.apply({core::RestoreDirective{7}, "never taken", 0}),
                      std::invalid_argument);
    }
  }
}

TEST_CASE("the optimizer step is reported per rank, apart from compute") {
  // With a profile of known rates: stage 0 holds 4 layers of 1e8 parameters
  // and the embedding (2e7), stage 1 its 4 layers and the head, which is a
  // second copy only when untied (the model's tying decides). At 1e-11 s per
  // parameter: 4.2e8 x 1e-11 = 4.2 ms on each stage (one copy each), against
  // 4 micro-batches x 4 layers x 3 ms = 48 ms of compute.
  core::Scenario s = two_stage_scenario();
  sim::SimBackend backend(s);
  core::WorkProfile p;
  p.layer.forward_ns = 1'000'000;
  p.layer.backward_ns = 2'000'000;
  p.params_per_gpu_layer = 1e8;
  p.params_per_gpu_embedding = 2e7;
  p.optimizer_s_per_param = 1e-11;
  backend.set_profile(p);
  const core::StepReport r = backend.step(s.plan);
  REQUIRE(r.rank_optimizer_ns.size() == 2);
  CHECK(r.rank_optimizer_ns[0] == 4'200'000);
  CHECK(r.rank_optimizer_ns[1] == 4'200'000);
  CHECK(r.rank_compute_ns[0] == 48'000'000);
}

namespace {

// Two hosts: GPUs 0 and 1 on one NVSwitch, GPUs 2 and 3 (spares) on another
// (`swapped`: GPUs 1 and 2 trade hosts); 100 GB/s to each switch, 10 GB/s
// between the switches, 1 us a cable.
topo::Topology host_and_spare(bool swapped = false) {
  topo::Topology t;
  const int a = t.add_node({"swA", topo::NodeKind::NvSwitch, -1, 0});
  const int b = t.add_node({"swB", topo::NodeKind::NvSwitch, -1, 1});
  for (int g = 0; g < 4; ++g) {
    const int host = (g < 2) != (swapped && (g == 1 || g == 2)) ? 0 : 1;
    const int v = t.add_node({"gpu" + std::to_string(g), topo::NodeKind::Gpu, g, host});
    t.add_cable(v, host == 0 ? a : b, 100e9, 1'000);
  }
  t.add_cable(a, b, 10e9, 1'000);
  t.validate("host-and-spare");
  return t;
}

// tp2 on GPUs 0 and 1, GPUs 2 and 3 free.
core::Scenario tp2_with_spares() {
  core::Scenario s = two_stage_scenario();
  s.topology = host_and_spare();
  s.plan.pp = 1;
  s.plan.tp = 2;
  return s;
}

}  // namespace

TEST_CASE("a rank remapped onto a spare on another host runs over that host's links") {
  const core::Scenario s = tp2_with_spares();
  sim::SimBackend backend(s);
  core::WorkProfile p;
  p.layer.forward_ns = 1'000'000;
  p.layer.backward_ns = 2'000'000;
  p.layer.tp_forward = {core::CollectiveKind::AllReduce, 1e8, 1};
  backend.set_profile(p);
  auto tp_busy_ns = [](const core::StepReport& r) {
    for (const auto& g : r.comm)
      if (g.group.rfind("tp[", 0) == 0) return g.busy_ns;
    return core::TimeNs{0};
  };
  const core::StepReport home = backend.step(s.plan);
  const int simulated = backend.simulated_steps();
  backend.apply({core::RemapDirective{1, 2}, "gpu 1 failed", 0});
  CHECK(backend.gpu_of_rank(1) == 2);
  CHECK(backend.gpu_of_rank(0) == 0);
  const core::StepReport away = backend.step(s.plan);
  // The remap is timed by the restore that follows it, not by itself.
  REQUIRE(away.applied.size() == 1);
  CHECK(away.applied.front().kind == "remap");
  CHECK(away.applied.front().ns == 0);
  // The same job on a cluster where GPU 1 itself sits on the other host
  // (rank 1 on GPU 1, no remap) runs over the very same links: its
  // iteration is the remapped one's to the nanosecond.
  core::Scenario native = s;
  native.topology = host_and_spare(true);
  sim::SimBackend native_backend(native);
  native_backend.set_profile(p);
  const core::StepReport apart = native_backend.step(native.plan);
  CHECK(away.iteration_ns == apart.iteration_ns);
  CHECK(tp_busy_ns(away) == tp_busy_ns(apart));
  // The all-reduce's ring now crosses the 10 GB/s cable instead of 100 GB/s
  // links: the tensor-parallel group is several times slower (8.6x: the
  // fabric's protocol efficiencies differ on and off the host).
  CHECK(tp_busy_ns(away) > 5 * tp_busy_ns(home));
  CHECK(away.iteration_ns > home.iteration_ns);
  // Simulated once when the placement changed, then reused.
  CHECK(backend.simulated_steps() == simulated + 1);
  CHECK(backend.step(s.plan).iteration_ns == away.iteration_ns);
  CHECK(backend.simulated_steps() == simulated + 1);
  // Back on its own GPU (repaired), the iteration is the first one's again.
  backend.apply({core::RemapDirective{1, 1}, "gpu 1 repaired", 0});
  CHECK(backend.step(s.plan).iteration_ns == home.iteration_ns);
}

TEST_CASE("a remap to no GPU, onto a busy one, or of no rank is refused with both named") {
  const core::Scenario s = tp2_with_spares();
  sim::SimBackend backend(s);
  auto refusal = [&](int rank, int gpu) {
    try {
      backend.apply({core::RemapDirective{rank, gpu}, "test", 0});
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(refusal(1, 4) == "remap rank 1 to gpu 4: the cluster has gpus 0..3");
  CHECK(refusal(2, 2) == "remap rank 2 to gpu 2: the job has ranks 0..1");
  CHECK(refusal(1, 0) == "remap rank 1 to gpu 0: rank 0 runs there");
  CHECK(refusal(1, 2) == "accepted");
}

TEST_CASE(
    "a ring re-order: taken as the next step's rings, charged one rebuild, refused when bad") {
  core::Scenario s = two_stage_scenario();
  s.plan.pp = 1;
  s.plan.dp = 2;
  sim::SimBackend backend(s);
  const auto before = backend.step(s.plan).iteration_ns;
  // Two replicas: the order 1 0 is the same ring, so the next step takes
  // exactly the rebuild longer (core::kRingRebuildNs) and the one after it
  // no longer.
  backend.apply({core::ReorderDirective{0, {1, 0}}, "test", 0});
  const core::StepReport next = backend.step(s.plan);
  CHECK(next.iteration_ns == before + core::kRingRebuildNs);
  REQUIRE(next.applied.size() == 1);
  CHECK(next.applied[0].kind == "reorder");
  CHECK(backend.step(s.plan).iteration_ns == before);
  CHECK_THROWS_WITH(backend.apply({core::ReorderDirective{1, {1, 0}}, "test", 0}),
                    "reorder dp group 1: the plan has data-parallel groups 0..0");
  CHECK_THROWS_WITH(backend.apply({core::ReorderDirective{0, {1, 1}}, "test", 0}),
                    "reorder dp group 0: expected an order of the replicas 0..1, each once");
  // The routes the policy reads: ranks 0 and 1 on GPUs 0 and 1, one host
  // (the star), joined through its switch: out of GPU 0, into GPU 1.
  const core::Capabilities caps = backend.capabilities();
  REQUIRE(caps.ring_routes);
  CHECK(caps.ring_routes.host_of_rank(0) == caps.ring_routes.host_of_rank(1));
  CHECK(caps.ring_routes.edge_links(0, 0, 1).size() == 2);
  // The order the policy reads back; a re-plan keeps it while the groups
  // stay (another micro-batch), and starts over for other groups (pp 2 dp 1).
  CHECK(caps.ring_routes.order(0) == std::vector<int>{1, 0});
  core::ParallelPlan same = s.plan;
  same.recompute = core::Recompute::Full;
  backend.apply({core::ReplanDirective{same}, "test", 0});
  CHECK(caps.ring_routes.order(0) == std::vector<int>{1, 0});
  backend.step(same);
  core::ParallelPlan other = s.plan;
  other.pp = 2;
  other.dp = 1;
  backend.apply({core::ReplanDirective{other}, "test", 0});
  CHECK(caps.ring_routes.order(0).empty());
}
