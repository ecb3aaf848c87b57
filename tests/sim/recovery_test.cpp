// Recovery from a killed rank in the one loop (core::JobRunner::set_recovery,
// on in `simulate` whenever faults.snapshot.every is set): the rank moves
// onto a spare GPU when the cluster has one, the newest snapshot is
// restored after the detection and restart, and the run goes on from it.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <variant>
#include <vector>

#include "core/scenario/scenario.hpp"
#include "core/snapshot/rank_state.hpp"
#include "sim/run.hpp"
#include "sim/sim_backend.hpp"

using namespace parashift;

namespace {

const std::string kSmall = std::string(PARASHIFT_SOURCE_DIR) + "/tests/tools/data/small.yaml";
// Snapshots every 2 iterations, each stalling the next for its whole copy
// (overlap off: the times below are derived from the copies).
const std::string kSnapshots = "faults={snapshot: {every: 2, overlap: false}}";
const std::string kKill =
    "faults={snapshot: {every: 2, overlap: false}, events: [{kind: kill, rank: 1, at_iteration: "
    "5}]}";

template <class D>
std::vector<core::TakenDirective> of_kind(const sim::RunSummary& run) {
  std::vector<core::TakenDirective> out;
  for (const auto& t : run.directives)
    if (std::holds_alternative<D>(t.directive.action)) out.push_back(t);
  return out;
}

}  // namespace

TEST_CASE("a killed rank with no spare restarts in place from the newest snapshot") {
  // On the path network: no link is shared, so snapshot replication is
  // priced on its own, slowing no iteration, and each snapshot costs its
  // device-to-host copy alone.
  const sim::RunSummary clean = sim::run_scenario(
      core::load_scenario(kSmall, {kSnapshots, "run.iterations=10", "run.network=path"}));
  const sim::RunSummary killed = sim::run_scenario(
      core::load_scenario(kSmall, {kKill, "run.iterations=10", "run.network=path"}));
  // Iterations 0-4 run, snapshots v2 and v4 taken before 2 and 4; rank 1
  // dies before 5: v4 is restored and iteration 4 runs again, then 5-9.
  REQUIRE(killed.failures.size() == 1);
  CHECK(killed.restarts == 1);
  CHECK_FALSE(killed.ended_on_failure);
  CHECK(killed.iterations == 11);
  CHECK(killed.tokens == clean.tokens);  // the re-run iteration trains nothing new
  const auto restores = of_kind<core::RestoreDirective>(killed);
  REQUIRE(restores.size() == 1);
  CHECK(std::get<core::RestoreDirective>(restores[0].directive.action).version == 4);
  CHECK(of_kind<core::RemapDirective>(killed).empty());  // 16 ranks on 16 GPUs: no spare
  // The same snapshots either way (v4 is not taken again after its restore).
  CHECK(of_kind<core::SnapshotDirective>(killed).size() == 4);
  CHECK(of_kind<core::SnapshotDirective>(clean).size() == 4);
  // Time: the clean run is 10 iterations and 4 snapshot copies, so one copy
  // is (clean - 10 x iteration) / 4. The killed run adds one iteration run
  // again, the restore's copy of the same state, and the detection and
  // restart (faults' heartbeat_timeout 30 s and reinit 20 s).
  const core::TimeNs iteration_ns = clean.healthy_iteration_ns;
  const core::TimeNs copy_ns = (clean.total_ns - 10 * iteration_ns) / 4;
  CHECK(copy_ns > 0);
  CHECK(killed.total_ns - clean.total_ns == iteration_ns + copy_ns + 50 * core::kNsPerS);
  // The time lost counts the replayed iteration: 50 s, 5 copies and it.
  CHECK(killed.replayed == 1);
  CHECK(killed.lost_ns() == 50 * core::kNsPerS + 5 * copy_ns + iteration_ns);
}

namespace {

// small.yaml (tp2 pp2 dp4, 16 GPUs on 2 nodes) for 10 iterations with
// snapshots every 2 and the fault events `events`; with `spares` 8, a
// spare node (GPUs 16-23) cabled like node 0. A failed GPU takes out
// itself alone (faults.replace gpu) unless `replace` says host.
core::Scenario failing(const std::string& events, int spares = 0,
                       const std::string& network = "maxmin", const std::string& replace = "gpu") {
  return core::load_scenario(
      kSmall, {"faults={snapshot: {every: 2, overlap: false}, spares: " + std::to_string(spares) +
                   ", replace: " + replace + ", events: [" + events + "]}",
               "run.iterations=10", "run.network=" + network});
}

}  // namespace

TEST_CASE("a killed rank moves onto a spare GPU on another host, and its group slows") {
  // faults.spares 8: one spare node, GPUs 16-23, beside the job's 2.
  const sim::RunSummary run =
      sim::run_scenario(failing("{kind: kill, rank: 1, at_iteration: 5}", 8));
  CHECK(run.restarts == 1);
  const auto remaps = of_kind<core::RemapDirective>(run);
  REQUIRE(remaps.size() == 1);
  const auto& remap = std::get<core::RemapDirective>(remaps[0].directive.action);
  CHECK(remap.rank == 1);
  CHECK(remap.spare_gpu == 16);  // the nearest: the first GPU of the spare node
  CHECK(remaps[0].iteration == 4);
  // Rank 1's tensor-parallel partner (rank 0) stays on node 0: their
  // all-reduces now cross the network instead of NVLink, so the iterations
  // after the restore are slower than the healthy one.
  CHECK(run.last.iteration_ns > run.healthy_iteration_ns);

  // The spare node is a copy of node 0 on the same rail leaves: the run is
  // the one on a 3-node cluster whose node 2 holds no rank, to the
  // nanosecond (loaded with dp6 to fill it, as the scenario's check wants,
  // then set to dp4).
  core::Scenario three =
      core::load_scenario(kSmall, {"faults={snapshot: {every: 2, overlap: false}, events: [{kind: "
                                   "kill, rank: 1, at_iteration: 5}]}",
                                   "run.iterations=10", "cluster.topology.nodes=3", "plan.dp=6",
                                   "training.global_batch=48"});
  three.plan.dp = 4;
  three.plan.global_batch = 32;
  three.training.global_batch = 32;
  const sim::RunSummary on_three = sim::run_scenario(three);
  CHECK(on_three.total_ns == run.total_ns);
  CHECK(on_three.last.iteration_ns == run.last.iteration_ns);
}

TEST_CASE("spares change nothing while no rank needs one") {
  // The same healthy run with and without a spare node: the spare's links
  // carry nothing and the job's routes are unchanged.
  const sim::RunSummary none = sim::run_scenario(failing("", 0));
  const sim::RunSummary spared = sim::run_scenario(failing("", 8));
  CHECK(spared.total_ns == none.total_ns);
  CHECK(spared.directives.size() == none.directives.size());
}

TEST_CASE("a failed GPU with no spare left shrinks the job by its replica and the run goes on") {
  // GPU 3 fails at 1 s: iteration 1 starts at one healthy iteration
  // (0.84 s) and iteration 2 after two and the snapshot v2 (> 1.6 s), so the
  // failure is seen before iteration 2, v2 taken. No GPU is free: the
  // replica of the rank on GPU 3 is dropped, tp2 pp2 kept, each replica's
  // batch of 32 / 4 = 8 kept: dp 3, global batch 24; v2 is restored and
  // iterations 2-9 run on 12 ranks.
  const sim::RunSummary run =
      sim::run_scenario(failing("{kind: fail, target: gpu, id: 3, at: 1s}"));
  REQUIRE(run.failures.size() == 1);
  CHECK(run.failures[0].component == "gpu 3");
  CHECK(run.restarts == 1);
  CHECK_FALSE(run.ended_on_failure);
  CHECK(run.replayed == 0);
  CHECK(run.iterations == 10);
  const auto replans = of_kind<core::ReplanDirective>(run);
  REQUIRE(replans.size() == 1);
  CHECK(replans[0].source == core::DirectiveSource::Recovery);
  CHECK(replans[0].iteration == 2);
  const core::ParallelPlan& shrunk =
      std::get<core::ReplanDirective>(replans[0].directive.action).plan;
  CHECK(shrunk.tp == 2);
  CHECK(shrunk.pp == 2);
  CHECK(shrunk.dp == 3);
  CHECK(shrunk.global_batch == 24);
  CHECK(run.final_plan.label() == shrunk.label());
  CHECK(std::get<core::RestoreDirective>(of_kind<core::RestoreDirective>(run)[0].directive.action)
            .version == 2);
  // Tokens: 2 iterations x 32 sequences, then 8 x 24, of 4,096 tokens.
  CHECK(run.tokens == doctest::Approx((2 * 32 + 8 * 24) * 4096.0));
}

TEST_CASE("a shrunk job grows back once the failed GPU is repaired") {
  // As above, GPU 3 fails at 1 s and the job shrinks to dp 3 before
  // iteration 2, whose iteration carries the 30 s detection and the
  // restore. With faults.repair 5 s, GPU 3 is back ~6.7 s after the start,
  // before iteration 2 ends: GPU 3 and the dropped replica's 3 GPUs are
  // free, one tp2 x pp2 replica, so before iteration 3 the runner re-plans
  // back to the original dp 4, global batch 32 (core::regrow_plan).
  const sim::RunSummary run = sim::run_scenario(core::load_scenario(
      kSmall, {"faults={snapshot: {every: 2, overlap: false}, repair: 5s, replace: gpu, events: "
               "[{kind: fail, target: gpu, id: 3, at: 1s}]}",
               "run.iterations=10", "run.network=maxmin"}));
  CHECK(run.restarts == 1);
  const auto replans = of_kind<core::ReplanDirective>(run);
  REQUIRE(replans.size() == 2);
  CHECK(replans[1].source == core::DirectiveSource::Recovery);
  CHECK(replans[1].iteration == 3);
  const core::ParallelPlan& grown =
      std::get<core::ReplanDirective>(replans[1].directive.action).plan;
  CHECK(grown.dp == 4);
  CHECK(grown.global_batch == 32);
  CHECK(run.final_plan.label() == grown.label());
  // Tokens: iterations 0-1 at 32 sequences, 2 at 24, 3-9 at 32 again.
  CHECK(run.tokens == doctest::Approx((2 * 32 + 24 + 7 * 32) * 4096.0));
}

TEST_CASE("a failed GPU's rank moves onto a spare, and a failed spare only leaves the pool") {
  // A spare node beside the job's 2. GPU 16 (the first spare, on node 2)
  // fails at 1 s: no rank ran there, so nothing is restored and the run
  // goes on. GPU 1 fails at 3 s: its rank 1 moves onto node 2, the nearest
  // spare left, GPU 17 (GPU 16 is gone), and the newest snapshot is restored.
  const sim::RunSummary run = sim::run_scenario(failing(
      "{kind: fail, target: gpu, id: 16, at: 1s}, {kind: fail, target: gpu, id: 1, at: 3s}", 3));
  REQUIRE(run.failures.size() == 2);
  CHECK(run.restarts == 1);
  CHECK_FALSE(run.ended_on_failure);
  const auto pool_note = std::find_if(run.notes.begin(), run.notes.end(), [](const auto& n) {
    return n.module == "recovery" && n.message == "gpu 16 failed: a spare, out of the pool";
  });
  CHECK(pool_note != run.notes.end());
  const auto remaps = of_kind<core::RemapDirective>(run);
  REQUIRE(remaps.size() == 1);
  const auto& remap = std::get<core::RemapDirective>(remaps[0].directive.action);
  CHECK(remap.rank == 1);
  CHECK(remap.spare_gpu == 17);
  CHECK(of_kind<core::ReplanDirective>(run).empty());
  CHECK(of_kind<core::RestoreDirective>(run).size() == 1);
}

TEST_CASE("under faults.replace host a failed GPU's host moves onto a spare host and comes back") {
  // GPU 3 fails at 1 s (seen before iteration 2). Its host, node 0 (GPUs
  // 0-7, ranks 0-7), goes out for the repair with it: 1 fail and 7 drains.
  // The 8 ranks move together onto the spare node, rank r onto GPU 16 + r
  // (core::remap_to_spares keeps a host's ranks on one spare host), so
  // every tensor-parallel pair stays on NVLink; the spare node is cabled
  // like node 0, so the iterations after the restore take the healthy
  // time. With faults.repair 5 s node 0 is back long before GPU 20 (rank 4,
  // now on the spare node) fails at 55 s, after the first restart's 30 s
  // detection and 20 s re-initialisation: the spare node is drained in
  // turn and ranks 0-7 move back onto GPUs 0-7.
  core::Scenario s = failing(
      "{kind: fail, target: gpu, id: 3, at: 1s}, {kind: fail, target: gpu, id: 20, at: 55s}", 8,
      "maxmin", "host");
  s.faults->repair_ns = 5 * core::kNsPerS;
  s.run.iterations = 20;
  const sim::RunSummary run = sim::run_scenario(s);
  CHECK_FALSE(run.ended_on_failure);
  CHECK(run.restarts == 2);
  REQUIRE(run.failures.size() == 16);
  CHECK(run.failures[0].kind == "fail");
  CHECK(run.failures[0].component == "gpu 3");
  CHECK(run.failures[1].kind == "drain");
  CHECK(run.failures[1].component == "gpu 0");
  CHECK(run.failures[8].component == "gpu 20");
  CHECK(run.failures[9].kind == "drain");
  const auto remaps = of_kind<core::RemapDirective>(run);
  REQUIRE(remaps.size() == 16);
  for (int r = 0; r < 8; ++r) {
    const auto& out =
        std::get<core::RemapDirective>(remaps[static_cast<std::size_t>(r)].directive.action);
    const auto& back =
        std::get<core::RemapDirective>(remaps[static_cast<std::size_t>(8 + r)].directive.action);
    CHECK(out.rank == r);
    CHECK(out.spare_gpu == 16 + r);
    CHECK(back.rank == r);
    CHECK(back.spare_gpu == r);
  }
  CHECK(of_kind<core::ReplanDirective>(run).empty());
  CHECK(run.last.iteration_ns == run.healthy_iteration_ns);
}

TEST_CASE("the loop waits for the repair where no spare and no smaller plan are left") {
  // Node 0, drained with GPU 3 (faults.replace host), holds pipeline stage
  // 0 of every replica (a stage's tp2 x dp4 ranks fill one 8-GPU node), so
  // no replica survives and tp2 pp2 cannot shrink: the ranks stay and the
  // job waits for the node's repair (faults.repair, 48 h by default, from
  // the failure at 1 s), then restores v2 and goes on, as the campaigns do.
  // The step that sees it starts at 2 x 0.8385 s = 1.677 s, so the wait is
  // 172,800 - 0.677 s, printed in whole seconds: 172799. The same run with
  // a 10 s repair differs by the wait alone: 48 h - 10 s, to the nanosecond.
  const std::string fail = "{kind: fail, target: gpu, id: 3, at: 1s}";
  const sim::RunSummary run = sim::run_scenario(failing(fail, 0, "maxmin", "host"));
  CHECK(run.failures.size() == 8);
  CHECK_FALSE(run.ended_on_failure);
  CHECK(run.restarts == 1);
  CHECK(run.iterations - run.replayed == 10);
  const auto waited = std::find_if(run.notes.begin(), run.notes.end(), [](const auto& n) {
    return n.message.find("gpu 3 failed and 7 GPUs drained with its host; ") == 0 &&
           n.message.find("no spare GPU and no smaller plan: waiting 172799 s for the repair") !=
               std::string::npos;
  });
  CHECK(waited != run.notes.end());
  core::Scenario quick = failing(fail, 0, "maxmin", "host");
  quick.faults->repair_ns = 10 * core::kNsPerS;
  const sim::RunSummary soon = sim::run_scenario(quick);
  CHECK(run.total_ns - soon.total_ns == 48 * 3600 * core::kNsPerS - 10 * core::kNsPerS);
  // A failed node (node 1: stage 1 of every replica) waits the same way,
  // but its memory dies with it: v2, taken before the step that sees the
  // failure, never committed, so node 1's ranks have no copy of it and the
  // job starts over from the remote checkpoint, the initial state v0. Its
  // restart is the baseline's 600 s instead of faults.reinit's 20 s, the
  // state is read from storage (checkpoint bytes at 1 TB/s) instead of
  // copied from host memory, and iterations 0 and 1 run again, v2's copy
  // with them (the same copy the drained run's restore paid).
  const sim::RunSummary node =
      sim::run_scenario(failing("{kind: fail, target: node, id: 1, at: 1s}"));
  CHECK(node.failures.size() == 8);
  CHECK_FALSE(node.ended_on_failure);
  const auto restores = of_kind<core::RestoreDirective>(node);
  REQUIRE(restores.size() == 1);
  CHECK(std::get<core::RestoreDirective>(restores[0].directive.action).version == 0);
  CHECK(std::get<core::RestoreDirective>(restores[0].directive.action).from_remote);
  const core::Scenario& s = failing("{kind: fail, target: node, id: 1, at: 1s}");
  const core::TimeNs read_ns = core::transfer_ns(
      core::checkpoint_bytes(core::rank_state(s.model, s.plan, s.training.seq_len), s.plan),
      s.faults->baseline.storage_Bps);
  const core::TimeNs extra_ns = 580 * core::kNsPerS + read_ns + 2 * run.healthy_iteration_ns;
  CHECK(static_cast<double>(node.total_ns - run.total_ns) ==
        doctest::Approx(static_cast<double>(extra_ns)).epsilon(1e-6));
}

TEST_CASE("the simulator keeps a failed GPU out of spares, remaps and re-plans") {
  // GPU 20 (spare, node 2) fails at 0 s: reported before iteration 0.
  const core::Scenario s = failing("{kind: fail, target: gpu, id: 20, at: 0s}", 8);
  sim::SimBackend backend(s);
  REQUIRE(backend.capabilities().spare_gpus.size() == 8);  // GPUs 16-23 before it is seen
  const core::StepReport failed = backend.step(s.plan);
  REQUIRE(failed.failures.size() == 1);
  CHECK(core::to_string(failed.failures[0]) == "fail gpu 20 at iteration 0");
  const std::vector<int> spares = backend.capabilities().spare_gpus;
  CHECK(spares == std::vector<int>{16, 17, 18, 19, 21, 22, 23});
  CHECK_THROWS_WITH_AS(backend.apply({core::RemapDirective{0, 20}, "test", 0}),
                       "remap rank 0 to gpu 20: that gpu failed", std::invalid_argument);
  // Re-planned to 24 ranks (dp6), they take the 23 GPUs left in order: one short.
  core::ParallelPlan dp6 = s.plan;
  dp6.dp = 6;
  dp6.global_batch = 48;
  CHECK_THROWS_WITH_AS(backend.apply({core::ReplanDirective{dp6}, "test", 0}),
                       ("replan to " + dp6.label() + ": 24 ranks, 23 GPUs left").c_str(),
                       std::invalid_argument);
  // dp5: 20 ranks on GPUs 0-19, none on GPU 20.
  core::ParallelPlan dp5 = s.plan;
  dp5.dp = 5;
  dp5.global_batch = 40;
  backend.apply({core::ReplanDirective{dp5}, "test", 0});
  CHECK(backend.step(dp5).failures.empty());
  CHECK(backend.gpu_of_rank(19) == 19);
  CHECK(backend.capabilities().spare_gpus == std::vector<int>{21, 22, 23});
}

TEST_CASE("a restore after a shrink waits for detection but does not rebuild twice") {
  // GPU 3 fails at 0 s, seen before iteration 0; snapshot v0 was taken
  // before it. A restore after a lost rank costs the copy of the state each
  // rank holds under the plan it restores into (unshrunk, the same as the
  // snapshot's; shrunk to dp 3, each rank's share of the distributed
  // optimizer's state grows by 4/3) + heartbeat_timeout 30 s + reinit 20 s;
  // after the shrink's re-plan, which rebuilds the communicators itself (its
  // own reinit is in the replan's time), the restore skips the 20 s.
  const core::Scenario s = failing("{kind: fail, target: gpu, id: 3, at: 0s}");
  for (const bool shrink : {false, true}) {
    CAPTURE(shrink);
    sim::SimBackend backend(s);
    backend.apply({core::SnapshotDirective{0}, "test", 0});
    REQUIRE(backend.step(s.plan).failures.size() == 1);
    core::ParallelPlan plan = s.plan;
    if (shrink) {
      plan.dp = 3;
      plan.global_batch = 24;
      backend.apply({core::ReplanDirective{plan}, "test", 0});
    }
    backend.apply({core::RestoreDirective{0}, "test", 0});
    const core::StepReport r = backend.step(plan);
    // Applied since the last completed step: the snapshot (the failed step
    // charged nothing), [the replan,] the restore.
    REQUIRE(r.applied.size() == (shrink ? 3u : 2u));
    CHECK(r.applied.front().kind == "snapshot");
    CHECK(r.applied.back().kind == "restore");
    const core::TimeNs snapshot_ns = r.applied.front().ns;
    CHECK(snapshot_ns > 0);
    const core::TimeNs copy_ns = s.faults->snapshot.host_copy_ns(
        core::rank_state(s.model, plan, s.training.seq_len).total_bytes());
    CHECK((shrink ? copy_ns > snapshot_ns : copy_ns == snapshot_ns));
    CHECK(r.applied.back().ns == copy_ns + (shrink ? 30 : 50) * core::kNsPerS);
  }
}

TEST_CASE("a failed link stops the job once, and its routes avoid the link from then on") {
  // Leaf l1 (rail 1) to spine p0 fails at 1 s, seen before iteration 2 (v2
  // taken): the job's collectives fail on it, so every rank restarts and v2
  // is restored; no rank is lost, nothing moves. Routes over l1 then take
  // another of its 32 spines, of the same rate and latency, so on the path
  // network (no contention, no replication simulated) every later
  // iteration is as fast as before: the time lost is the detection and
  // restart (30 s + 20 s) and five state copies (four snapshots and the
  // restore), as for a kill but with nothing to replay (iteration 2 is the
  // snapshot's).
  const sim::RunSummary clean = sim::run_scenario(failing("", 0, "path"));
  const sim::RunSummary run =
      sim::run_scenario(failing("{kind: fail, target: link, id: l1->p0, at: 1s}", 0, "path"));
  REQUIRE(run.failures.size() == 1);
  CHECK(run.failures[0].component == "link l1->p0");
  CHECK(run.restarts == 1);
  CHECK(run.replayed == 0);
  CHECK(of_kind<core::RemapDirective>(run).empty());
  CHECK(of_kind<core::ReplanDirective>(run).empty());
  const auto restores = of_kind<core::RestoreDirective>(run);
  REQUIRE(restores.size() == 1);
  CHECK(restores[0].directive.reason == "restart 1 after link l1->p0 failed: the newest snapshot");
  const core::TimeNs copy_ns = (clean.total_ns - 10 * clean.healthy_iteration_ns) / 4;
  CHECK(run.lost_ns() == 50 * core::kNsPerS + 5 * copy_ns);
  CHECK(run.tokens == clean.tokens);

  // On the backend: a route from rail 1 of node 0 (GPU 1) to rail 2 of
  // node 1 (GPU 10) climbs from l1 to a spine; over 512 flow hashes
  // some pick p0 before the failure, none after.
  const core::Scenario s = failing("{kind: fail, target: link, id: l1->p0, at: 0s}");
  sim::SimBackend backend(s);
  const topo::Topology& t = backend.paths().topology();
  const auto uses_p0 = [&] {
    int found = 0;
    for (std::uint64_t h = 0; h < 512; ++h)
      for (const topo::LinkId e : t.route(1, 10, h))
        found += (t.link(e).name == "l1->p0" || t.link(e).name == "p0->l1") ? 1 : 0;
    return found;
  };
  CHECK(uses_p0() > 0);
  const core::StepReport failed = backend.step(s.plan);
  REQUIRE(failed.failures.size() == 1);
  CHECK(uses_p0() == 0);
  CHECK(t.route(1, 10).size() == 6);  // still up to a spine and down
}

TEST_CASE("a failed link that cuts a GPU off fails the GPU with it") {
  // GPU 1's NIC cable (n1 to leaf l1): GPU 1 reaches only its NVSwitch,
  // so only the GPUs of node 0. It fails with the link; its rank moves onto
  // the spare node's first GPU and v2 is restored.
  const sim::RunSummary run =
      sim::run_scenario(failing("{kind: fail, target: link, id: n1->l1, at: 1s}", 8));
  REQUIRE(run.failures.size() == 2);
  CHECK(run.failures[0].component == "link n1->l1");
  CHECK(run.failures[1].component == "gpu 1");
  CHECK(run.restarts == 1);
  const auto remaps = of_kind<core::RemapDirective>(run);
  REQUIRE(remaps.size() == 1);
  CHECK(std::get<core::RemapDirective>(remaps[0].directive.action).rank == 1);
  CHECK(std::get<core::RemapDirective>(remaps[0].directive.action).spare_gpu == 16);
}

TEST_CASE(
    "a drained GPU a failed cable cuts off is not waited for, and a GPU outside the slots "
    "drains nothing") {
  // GPU 3 fails and drains node 0 (no spare: the job would wait for the
  // repair), and GPU 1's NIC cable fails in the same second: GPU 1, already
  // drained, is now cut off for good, so no repair brings the job back and
  // the run ends.
  const sim::RunSummary cut = sim::run_scenario(failing(
      "{kind: fail, target: gpu, id: 3, at: 1s}, {kind: fail, target: link, id: n1->l1, at: 1s}", 0,
      "maxmin", "host"));
  CHECK(cut.ended_on_failure);
  REQUIRE_FALSE(cut.notes.empty());
  CHECK(cut.notes.back().message.find("no spare GPU and no smaller plan: the run ends") !=
        std::string::npos);
  // faults.spares 4: GPUs 16-19 of the spare node are spares, 20-23 out of
  // the pool from the start; GPU 21 failing takes nothing more (no drain of
  // node 2's spares), and the run goes on untouched.
  const sim::RunSummary outside =
      sim::run_scenario(failing("{kind: fail, target: gpu, id: 21, at: 1s}", 4, "maxmin", "host"));
  CHECK(outside.failures.empty());
  CHECK_FALSE(outside.ended_on_failure);
  CHECK(outside.restarts == 0);
}

TEST_CASE("faults.max_restarts bounds the recoveries, and is read as a count") {
  // Two kills (rank 1 before 5, rank 2 before 7), snapshots every 2: with
  // max_restarts 1 the first is recovered (v4 restored) and the second
  // ends the run; without the field both are recovered.
  const std::string two_kills =
      "faults={snapshot: {every: 2, overlap: false}, events: [{kind: kill, rank: 1, at_iteration: "
      "5}, "
      "{kind: kill, rank: 2, at_iteration: 7}]";
  const sim::RunSummary bounded = sim::run_scenario(
      core::load_scenario(kSmall, {two_kills + ", max_restarts: 1}", "run.iterations=10"}));
  CHECK(bounded.restarts == 1);
  CHECK(bounded.failures.size() == 2);
  CHECK(bounded.ended_on_failure);
  const sim::RunSummary free =
      sim::run_scenario(core::load_scenario(kSmall, {two_kills + "}", "run.iterations=10"}));
  CHECK(free.restarts == 2);
  CHECK_FALSE(free.ended_on_failure);
  CHECK_THROWS_WITH_AS(
      core::load_scenario(kSmall, {"faults={max_restarts: -1}"}),
      doctest::Contains("faults.max_restarts (set on the command line): expected a non-negative "
                        "integer, found '-1'"),
      core::InputError);
}
