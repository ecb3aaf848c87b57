// core::JobRunner, the one loop: over the fake backend it takes the
// controller's directives (with the iteration they precede and their cost),
// schedules snapshots only on a backend that takes them, ends the run at a
// reported failure, and checks the scenario's fault targets.
#include <doctest/doctest.h>

#include <string>
#include <variant>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "contract_support.hpp"
#include "core/controller/job_runner.hpp"
#include "core/faults/fault_config.hpp"
#include "core/input_error.hpp"
#include "core/scenario/yaml_fields.hpp"
#include "fake_backend.hpp"

using namespace parashift;

namespace {

core::ParallelPlan plan_of(int pp, int dp, int global_batch) {
  core::ParallelPlan plan;
  plan.pp = pp;
  plan.dp = dp;
  plan.global_batch = global_batch;
  return plan;
}

// A backend of fixed 1 ms steps that records what it is told, takes
// snapshots, and reports a failure at `fail_at` (-1: never).
class RecordingBackend : public core::Backend {
 public:
  explicit RecordingBackend(std::int64_t fail_at = -1) : fail_at_(fail_at) {}
  core::Capabilities capabilities() const override {
    core::Capabilities caps;
    caps.snapshots_to_host = true;
    caps.ranks = 1;
    return caps;
  }
  core::StepReport step(const core::ParallelPlan&) override {
    core::StepReport r;
    r.iteration = steps_++;
    r.iteration_ns = 1'000'000;
    r.rank_compute_ns = {1'000'000};
    r.rank_exposed_comm_ns = {0};
    r.rank_peak_memory_bytes = {0};
    if (r.iteration == fail_at_) r.failures.push_back({"kill", "rank 0", 0, r.iteration, {}});
    return r;
  }
  void apply(const core::Directive& d) override { applied.push_back(d); }
  std::vector<core::Directive> applied;

 private:
  std::int64_t fail_at_;
  std::int64_t steps_ = 0;
};

core::FaultConfig faults_from_yaml(const std::string& text) {
  const YAML::Node root = YAML::Load(text);
  core::YamlFields fields(root, "faults", "s.yaml");
  return core::read_fault_config(fields);
}

}  // namespace

TEST_CASE("the runner over the fake: one re-partition, before the iteration after its decision") {
  // The contract's re-partition case (controller_contract.hpp): pp 8, 31
  // layers, stage 3 at 1.5x; decided on report 6, so applied before iteration 7.
  test::ContractCase c{plan_of(8, 1, 8), 31};
  test::FakeBackend backend(c);
  backend.set_slowdown(3, 1.5);
  core::JobRunner runner(backend, c.plan);
  runner.set_controller(core::Controller(
      test::contract_job(c, 1000),
      test::policy_from_yaml("{straggler: {}, balance: {min_gain_s: 1}}"), backend.capabilities()));
  while (runner.iterations() < 30) REQUIRE(runner.step());
  REQUIRE(runner.directives().size() == 1);
  const core::TakenDirective& t = runner.directives()[0];
  CHECK(t.iteration == 7);
  const auto* r = std::get_if<core::RepartitionDirective>(&t.directive.action);
  REQUIRE(r != nullptr);
  CHECK(r->layers_per_stage == std::vector<int>{4, 4, 4, 3, 4, 4, 4, 4});
  CHECK(backend.layers_per_virtual_stage() == r->layers_per_stage);
  // The move's cost as the balancer priced it: 1.6 GB at 50 GB/s = 0.032 s.
  CHECK(t.cost_s == doctest::Approx(0.032));
  // Stage 3 named once: window full at report 4, patience 3 -> after report 6,
  // i.e. after 7 iterations.
  REQUIRE(runner.stragglers().size() == 1);
  CHECK(runner.stragglers()[0].iteration == 7);
  CHECK(runner.stragglers()[0].what.rfind("gpu 3 ", 0) == 0);
  CHECK(runner.iterations() == 30);
  CHECK(runner.failures().empty());
}

TEST_CASE(
    "snapshots every k iterations, none where a restore resumed, none without the capability") {
  RecordingBackend backend;
  core::JobRunner runner(backend, plan_of(1, 1, 1));
  runner.set_snapshot_every(3, "faults.snapshot.every");
  // Restored at 6: snapshots before 9 and 12 (6 is the restored state itself).
  runner.set_next_iteration(6);
  while (runner.next_iteration() < 13) REQUIRE(runner.step());
  std::vector<long long> versions;
  for (const auto& d : backend.applied)
    versions.push_back(std::get<core::SnapshotDirective>(d.action).version);
  CHECK(versions == std::vector<long long>{9, 12});
  CHECK(runner.iterations() == 7);  // 6..12

  struct NoSnapshots : RecordingBackend {
    core::Capabilities capabilities() const override {
      core::Capabilities caps = RecordingBackend::capabilities();
      caps.snapshots_to_host = false;
      return caps;
    }
  } bare;
  core::JobRunner no_snapshots(bare, plan_of(1, 1, 1));
  CHECK_THROWS_WITH_AS(no_snapshots.set_snapshot_every(2, "faults.snapshot.every"),
                       doctest::Contains("faults.snapshot.every: this backend cannot take"),
                       core::InputError);
  no_snapshots.set_snapshot_every(0, "faults.snapshot.every");  // none asked: fine
}

TEST_CASE("a reported failure ends the run and scheduled directives go before their iteration") {
  RecordingBackend backend(4);
  core::JobRunner runner(backend, plan_of(1, 1, 1));
  runner.schedule(2, {core::RestoreDirective{1}, "scheduled", 0});
  int steps = 0;
  while (runner.step()) ++steps;
  // Iterations 0..3 complete; the step of iteration 4 reports the kill.
  CHECK(steps == 4);
  CHECK(runner.iterations() == 4);
  REQUIRE(runner.failures().size() == 1);
  CHECK(core::to_string(runner.failures()[0]) == "kill rank 0 at iteration 4");
  REQUIRE(runner.directives().size() == 1);
  CHECK(runner.directives()[0].iteration == 2);
  CHECK(backend.applied.size() == 1);
}

TEST_CASE("fault targets: a kill of a rank that does not exist, more spares than GPUs") {
  const auto kill = faults_from_yaml("{events: [{kind: kill, rank: 4, at_iteration: 5}]}");
  REQUIRE(kill.events.size() == 1);
  CHECK(kill.events[0].kind == core::FaultEventKind::Kill);
  CHECK(kill.events[0].at_iteration == 5);
  core::check_fault_targets(kill, 5, 8);  // rank 4 of 5: fine
  CHECK_THROWS_WITH_AS(core::check_fault_targets(kill, 4, 8),
                       doctest::Contains("faults.events[0].rank: rank 4 does not exist; "
                                         "expected a rank in 0..3"),
                       core::InputError);
  const auto spares = faults_from_yaml("{spares: 9}");
  core::check_fault_targets(spares, 8, 9);
  CHECK_THROWS_WITH_AS(core::check_fault_targets(spares, 8, 8),
                       doctest::Contains("faults.spares: 9 spares, but the cluster has 8 GPUs"),
                       core::InputError);
  CHECK_THROWS_WITH_AS(faults_from_yaml("{events: [{kind: kill, at_iteration: 5}]}"),
                       doctest::Contains("faults.events[0].rank: missing"), core::InputError);
  CHECK_THROWS_WITH_AS(faults_from_yaml("{snapshot: {every: -1}}"),
                       doctest::Contains("faults.snapshot.every"), core::InputError);
}

namespace {

// Two ranks on GPUs 0 and 1 (host 0); GPU 2 on host 1 spare unless
// `spare` is false (then it is rank-less but not offered). The step of
// iteration 3 (or `at`) reports `failure` once; every other step is 1 ms.
class PlacedBackend : public RecordingBackend {
 public:
  PlacedBackend(core::FailureSeen failure, bool spare)
      : failures_{std::move(failure)}, spare_(spare) {}
  PlacedBackend(core::FailureSeen failure, bool spare, std::int64_t at)
      : failures_{std::move(failure)}, spare_(spare), at_(at) {}
  PlacedBackend(std::vector<core::FailureSeen> failures, bool spare)
      : failures_(std::move(failures)), spare_(spare) {}
  core::Capabilities capabilities() const override {
    core::Capabilities caps = RecordingBackend::capabilities();
    caps.ranks = 2;
    caps.gpu_of_rank = {0, moved_to_ >= 0 ? moved_to_ : 1};
    if (spare_ && moved_to_ < 0) caps.spare_gpus = {2};
    caps.place_of_gpu = {{0, 0}, {0, 0}, {1, 0}};
    caps.back_at_ns = back_at_ns;
    return caps;
  }
  std::vector<core::TimeNs> back_at_ns;  // Capabilities::back_at_ns (empty: no repairs)
  core::StepReport step(const core::ParallelPlan& plan) override {
    core::StepReport r = RecordingBackend::step(plan);
    if (r.iteration == at_ && !failed_) {
      failed_ = true;
      r.failures = failures_;
    }
    return r;
  }
  void apply(const core::Directive& d) override {
    RecordingBackend::apply(d);
    if (const auto* m = std::get_if<core::RemapDirective>(&d.action)) moved_to_ = m->spare_gpu;
  }

 private:
  std::vector<core::FailureSeen> failures_;
  bool spare_;
  std::int64_t at_ = 3;
  bool failed_ = false;
  int moved_to_ = -1;
};

// Steps until the run ends or 6 iterations are done.
bool run_six(core::JobRunner& runner) {
  runner.set_snapshot_every(2, "test");
  runner.set_recovery(10);
  while (runner.next_iteration() < 6)
    if (!runner.step()) return false;
  return true;
}

// The kinds of the directives the runner applied, in order.
std::vector<std::string> kinds_taken(const core::JobRunner& runner) {
  std::vector<std::string> kinds;
  for (const auto& t : runner.directives()) kinds.push_back(core::kind_name(t.directive.action));
  return kinds;
}

}  // namespace

TEST_CASE("recovery: a failed GPU's rank moves onto the spare and the newest snapshot returns") {
  PlacedBackend backend({"fail", "gpu 1", 0, 3, {}}, true);
  core::JobRunner runner(backend, plan_of(1, 2, 2));
  CHECK(run_six(runner));
  // v2 taken before iteration 2; GPU 1 fails in iteration 3: rank 1 onto
  // GPU 2, v2 restored, iterations 2-5 run (again): 3 + 4 = 7 steps done.
  CHECK(runner.restarts() == 1);
  CHECK(runner.iterations() == 7);
  CHECK(kinds_taken(runner) ==
        std::vector<std::string>{"snapshot", "remap", "restore", "snapshot"});
  const auto& remap = std::get<core::RemapDirective>(runner.directives()[1].directive.action);
  CHECK(remap.rank == 1);
  CHECK(remap.spare_gpu == 2);
  CHECK(runner.directives()[1].source == core::DirectiveSource::Recovery);
  // GPU 2 is on another host of the same rack (rack 0 holds both hosts).
  CHECK(runner.directives()[1].directive.reason == "gpu 1 failed; spare on same rack");
}

TEST_CASE("recovery: a failed GPU with no spare and no shrink ends the run, saying why") {
  PlacedBackend backend({"fail", "gpu 1", 0, 3, {}}, false);
  core::JobRunner runner(backend, plan_of(1, 2, 2));
  CHECK_FALSE(run_six(runner));
  CHECK(runner.restarts() == 0);
  REQUIRE_FALSE(runner.notes().empty());
  CHECK(runner.notes().back().message ==
        "gpu 1 failed; no spare GPU and no smaller plan: the run ends");
  // The same where the backend repairs GPU 1 90 s after the failure (at
  // 0 ns): the rank stays, the job waits, v2 is restored and iterations
  // 2-5 run again: 3 + 4 = 7 steps.
  PlacedBackend repaired({"fail", "gpu 1", 0, 3, {}}, false);
  repaired.back_at_ns = {0, 90 * core::kNsPerS, 0};
  core::JobRunner waits(repaired, plan_of(1, 2, 2));
  CHECK(run_six(waits));
  CHECK(waits.restarts() == 1);
  CHECK(waits.iterations() == 7);
  REQUIRE_FALSE(waits.notes().empty());
  CHECK(waits.notes().front().message ==
        "gpu 1 failed; no spare GPU and no smaller plan: waiting 90 s for the repair "
        "(faults.repair)");
  CHECK(kinds_taken(waits) == std::vector<std::string>{"snapshot", "restore", "snapshot"});
  // A GPU not coming back (-1) is not waited for.
  PlacedBackend gone({"fail", "gpu 1", 0, 3, {}}, false);
  gone.back_at_ns = {0, -1, 0};
  core::JobRunner ends(gone, plan_of(1, 2, 2));
  CHECK_FALSE(run_six(ends));
}

TEST_CASE("recovery: a rank killed on a GPU that failed in the same step is lost once") {
  // Rank 1 runs on GPU 1: its kill and GPU 1's failure are one loss, so
  // one remap onto the spare (GPU 2), named by the GPU's failure.
  PlacedBackend both({{"kill", "rank 1", 0, 3, {}}, {"fail", "gpu 1", 0, 3, {}}}, true);
  core::JobRunner runner(both, plan_of(1, 2, 2));
  CHECK(run_six(runner));
  CHECK(runner.restarts() == 1);
  CHECK(kinds_taken(runner) ==
        std::vector<std::string>{"snapshot", "remap", "restore", "snapshot"});
  CHECK(runner.directives()[1].directive.reason == "gpu 1 failed; spare on same rack");
}

TEST_CASE("recovery: a failed spare only leaves the pool, an unknown failure is not recovered") {
  PlacedBackend spare({"fail", "gpu 2", 0, 3, {}}, true);
  core::JobRunner on(spare, plan_of(1, 2, 2));
  CHECK(run_six(on));
  // Nothing restored: iteration 3 is simply stepped again, 6 steps in all.
  CHECK(on.restarts() == 0);
  CHECK(on.iterations() == 6);
  REQUIRE(on.notes().size() == 1);
  CHECK(on.notes()[0].message == "gpu 2 failed: a spare, out of the pool");
  // The same before any snapshot: still nothing to restore, the run goes on.
  PlacedBackend early({"fail", "gpu 2", 0, 1, {}}, true, 1);
  core::JobRunner before(early, plan_of(1, 2, 2));
  CHECK(run_six(before));
  CHECK(before.iterations() == 6);
  // A spare drained with a failed GPU's host (faults.replace host) leaves
  // the pool the same way, and the note says it did not fail itself.
  PlacedBackend drained({"drain", "gpu 2", 0, 3, {}}, true);
  core::JobRunner host(drained, plan_of(1, 2, 2));
  CHECK(run_six(host));
  REQUIRE(host.notes().size() == 1);
  CHECK(host.notes()[0].message == "gpu 2 drained with its host: a spare, out of the pool");
  // A component recovery does not know is not recovered.
  PlacedBackend other({"fail", "switch 3", 0, 3, {}}, true);
  core::JobRunner ends(other, plan_of(1, 2, 2));
  CHECK_FALSE(run_six(ends));
}

TEST_CASE("recovery: a failed link loses no rank, but every rank restarts from the snapshot") {
  // The link fails in iteration 3, v2 taken before iteration 2: nothing
  // moves, v2 is restored, iterations 2-5 run again: 3 + 4 = 7 steps.
  PlacedBackend backend({"fail", "link leaf0->spine1", 0, 3, {}}, true);
  core::JobRunner runner(backend, plan_of(1, 2, 2));
  CHECK(run_six(runner));
  CHECK(runner.restarts() == 1);
  CHECK(runner.iterations() == 7);
  CHECK(kinds_taken(runner) == std::vector<std::string>{"snapshot", "restore", "snapshot"});
  CHECK(runner.directives()[1].directive.reason ==
        "restart 1 after link leaf0->spine1 failed: the newest snapshot");
}
