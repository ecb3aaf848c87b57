// Which snapshot the one loop restores when failures take host memory
// (core::choose_version over SimBackend's ledger, Capabilities::
// snapshot_holdings): the newest version every rank's shard still has on a
// live host, else the remote checkpoint; and a failure during a wait for
// repairs is seen when it happens.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "core/scenario/scenario.hpp"
#include "core/snapshot/rank_state.hpp"
#include "core/snapshot/snapshot_holdings.hpp"
#include "sim/run.hpp"
#include "sim/sim_backend.hpp"

using namespace parashift;

namespace {

const std::string kSmall = std::string(PARASHIFT_SOURCE_DIR) + "/tests/tools/data/small.yaml";

// tests/tools/data/small.yaml: tp2 pp2 dp4 on 2 DGX hosts, no spare.
// Snapshots every 2 iterations, each stalling the next for its copy;
// replicas on the other node. Node 0 fails at 3 s, node 1 at 5 s; repairs
// take an hour.
core::Scenario two_node_failures(const std::string& checkpoint_interval) {
  return core::load_scenario(
      kSmall, {"faults={snapshot: {every: 2, overlap: false, domain: node}, repair: 1h, "
               "baseline: {checkpoint_interval: " +
                   checkpoint_interval +
                   "}, events: [{kind: fail, target: node, id: 0, at: 3s}, "
                   "{kind: fail, target: node, id: 1, at: 5s}]}",
               "run.iterations=12"});
}

std::vector<core::RestoreDirective> restores(const sim::RunSummary& run) {
  std::vector<core::RestoreDirective> out;
  for (const auto& t : run.directives)
    if (const auto* r = std::get_if<core::RestoreDirective>(&t.directive.action)) out.push_back(*r);
  return out;
}

bool noted(const sim::RunSummary& run, const std::string& text) {
  return std::any_of(run.notes.begin(), run.notes.end(),
                     [&](const core::PolicyNote& n) { return n.message.find(text) == 0; });
}

}  // namespace

TEST_CASE("a version not yet replicated falls back to the committed one, then to remote") {
  // Iterations take 0.8385 s; v2 is taken at 1.677 s and its copy stalls
  // 0.236 s, so iterations 2 and 3 end at 2.752 and 3.590 s, and v4 is
  // taken before the step that sees node 0's failure (at 3 s). v4 has not
  // replicated: node 0's ranks' only copy of it died with node 0's memory,
  // so v2 (committed, node 0's ranks' copy on node 1) is restored, the
  // newest whole version: no state loss. With no spare and no smaller plan
  // the job waits for node 0; node 1 fails during the wait, taking the
  // other copy of every shard of v2. The remote checkpoint (the first is
  // written at 30 min) is the initial state: the job starts over from v0.
  const sim::RunSummary run = sim::run_scenario(two_node_failures("30min"));
  CHECK_FALSE(run.ended_on_failure);
  CHECK(run.restarts == 2);
  const auto r = restores(run);
  REQUIRE(r.size() == 2);
  CHECK(r[0].version == 2);
  CHECK_FALSE(r[0].from_remote);
  CHECK(r[1].version == 0);
  CHECK(r[1].from_remote);
  CHECK(noted(run,
              "v2 lost: no surviving host memory holds the shards of ranks 0, 1, 2 and 13 "
              "more (a state loss)"));
  CHECK_FALSE(noted(run, "v4 lost"));
  // The run's tokens are those its final state holds: 12 iterations of 32
  // sequences of 4,096 tokens, all run after the last restore.
  CHECK(run.tokens == doctest::Approx(12 * 32 * 4096.0));
}

TEST_CASE("a remote checkpoint written in time saves the state a node failure takes") {
  // As above with a remote checkpoint every 2 s: at 2 s the newest version
  // taken is v2 (at 1.677 s), written by 2.094 s (checkpoint bytes at
  // 1 TB/s). The second restore reads v2 from remote: nothing committed is
  // lost, and iterations 0 and 1 (and v2's copy) are not run again.
  const core::Scenario scenario = two_node_failures("2s");
  const sim::RunSummary saved = sim::run_scenario(scenario);
  const auto r = restores(saved);
  REQUIRE(r.size() == 2);
  CHECK(r[1].version == 2);
  CHECK(r[1].from_remote);
  CHECK_FALSE(noted(saved, "v2 lost"));
  CHECK(saved.tokens == doctest::Approx(12 * 32 * 4096.0));
  const sim::RunSummary lost = sim::run_scenario(two_node_failures("30min"));
  const double copy_ns = static_cast<double>(scenario.faults->snapshot.host_copy_ns(
      core::rank_state(scenario.model, scenario.plan, scenario.training.seq_len).total_bytes()));
  // The run that lost v2 takes it again, and its replication shares the
  // links with iteration 2 (max-min network): under a millisecond more.
  const double extra_ns = static_cast<double>(lost.total_ns - saved.total_ns);
  const double rerun_ns = 2.0 * static_cast<double>(saved.healthy_iteration_ns) + copy_ns;
  CHECK(extra_ns >= rerun_ns);
  CHECK(extra_ns < rerun_ns + 1e6);
}

TEST_CASE("the ledger keeps keep_versions and the newest committed, whatever never commits") {
  // Snapshots before every iteration, 2 kept. On the path network a
  // snapshot's replication (~0.24 s) commits under the next iteration
  // (0.84 s), unless a restart ends it: every third version is restored at
  // once, so it never commits. The ledger must still hold only the newest
  // two and the newest committed one (v12 is cut, v11 committed: {11, 12}),
  // not every version since the first that never committed.
  const core::Scenario s = core::load_scenario(
      kSmall, {"faults={snapshot: {every: 1, keep_versions: 2}}", "run.network=path"});
  sim::SimBackend backend(s);
  backend.step(s.plan);
  for (long long v = 1; v <= 12; ++v) {
    backend.apply({core::SnapshotDirective{v}, "test", 0});
    if (v % 3 == 0) backend.apply({core::RestoreDirective{v}, "cuts its replication", 0});
    backend.step(s.plan);
  }
  const core::SnapshotHoldings held = backend.capabilities().snapshot_holdings();
  CHECK(held.replicas.versions() == std::set<long long>{11, 12});
  CHECK(held.committed == 11);
}

TEST_CASE("a state read back from the remote checkpoint is restorable from memory after") {
  // v0 restored from remote storage is in the ranks' hosts' memories: a
  // failure before the next snapshot restores it from there (the runner
  // chooses it: whole in memory, as new as the remote copy).
  const core::Scenario s = core::load_scenario(kSmall, {"faults={snapshot: {every: 2}}"});
  sim::SimBackend backend(s);
  backend.step(s.plan);
  backend.apply({core::RestoreDirective{0, true}, "remote", 0});
  backend.step(s.plan);
  const auto choice = core::choose_version(backend.capabilities().snapshot_holdings());
  REQUIRE(choice);
  CHECK(choice->version == 0);
  CHECK_FALSE(choice->from_remote);
  CHECK_NOTHROW(backend.apply({core::RestoreDirective{0}, "from memory", 0}));
}

TEST_CASE("a cable that cuts off a waiting rank's GPU for good ends the run, cleanly") {
  // As the first case, but at 5 s the cable from GPU 0's NIC to its leaf
  // fails instead of node 1: GPU 0, out for node 0's repair, is cut off and
  // will never come back, so the waiting ranks cannot resume: the run ends
  // with the reason noted (before, the next step threw "not coming back").
  const sim::RunSummary run = sim::run_scenario(core::load_scenario(
      kSmall, {"faults={snapshot: {every: 2, overlap: false, domain: node}, repair: 1h, "
               "events: [{kind: fail, target: node, id: 0, at: 3s}, "
               "{kind: fail, target: link, id: \"n0->l0\", at: 5s}]}",
               "run.iterations=12"}));
  CHECK(run.ended_on_failure);
  CHECK(noted(run, "gpus 0-7 failed; no spare GPU and no smaller plan: the run ends"));
}
