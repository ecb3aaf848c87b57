// Recovery from a killed rank in the one loop (core::JobRunner::set_recovery,
// on in `simulate` whenever faults.snapshot.every is set): the rank moves
// onto a spare GPU when the cluster has one, the newest snapshot is
// restored after the detection and restart, and the run goes on from it.
#include <doctest/doctest.h>

#include <string>
#include <variant>
#include <vector>

#include "core/scenario/scenario.hpp"
#include "sim/run.hpp"

using namespace parashift;

namespace {

const std::string kSmall = std::string(PARASHIFT_SOURCE_DIR) + "/tests/tools/data/small.yaml";
const std::string kSnapshots = "faults={snapshot: {every: 2}}";
const std::string kKill =
    "faults={snapshot: {every: 2}, events: [{kind: kill, rank: 1, at_iteration: 5}]}";

template <class D>
std::vector<core::TakenDirective> of_kind(const sim::RunSummary& run) {
  std::vector<core::TakenDirective> out;
  for (const auto& t : run.directives)
    if (std::holds_alternative<D>(t.directive.action)) out.push_back(t);
  return out;
}

}  // namespace

TEST_CASE("a killed rank with no spare restarts in place from the newest snapshot") {
  const sim::RunSummary clean =
      sim::run_scenario(core::load_scenario(kSmall, {kSnapshots, "run.iterations=10"}));
  const sim::RunSummary killed =
      sim::run_scenario(core::load_scenario(kSmall, {kKill, "run.iterations=10"}));
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

TEST_CASE("a killed rank moves onto a spare GPU on another host, and its group slows") {
  // 3 nodes of 8 GPUs; the job (tp2 pp2 dp4, 16 ranks) fills nodes 0 and
  // 1, node 2 is spare. Loaded with dp6 to fill the cluster, then set to
  // dp4 to leave a node free (the scenario's check wants every GPU used).
  core::Scenario s =
      core::load_scenario(kSmall, {kKill, "run.iterations=10", "cluster.topology.nodes=3",
                                   "plan.dp=6", "training.global_batch=48"});
  s.plan.dp = 4;
  s.plan.global_batch = 32;
  s.training.global_batch = 32;
  const sim::RunSummary run = sim::run_scenario(s);
  CHECK(run.restarts == 1);
  const auto remaps = of_kind<core::RemapDirective>(run);
  REQUIRE(remaps.size() == 1);
  const auto& remap = std::get<core::RemapDirective>(remaps[0].directive.action);
  CHECK(remap.rank == 1);
  CHECK(remap.spare_gpu >= 16);  // on node 2
  CHECK(remap.spare_gpu < 24);
  CHECK(remaps[0].iteration == 4);
  // Rank 1's tensor-parallel partner (rank 0) stays on node 0: their
  // all-reduces now cross the network instead of NVLink, so the iterations
  // after the restore are slower than the healthy one.
  CHECK(run.last.iteration_ns > run.healthy_iteration_ns);
}
