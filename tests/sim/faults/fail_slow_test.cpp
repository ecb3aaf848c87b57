// Fail-slow episodes (sim/faults/fail_slow): drawn and scheduled episodes,
// and what each policy loses to them in a campaign.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../../tools/cli_harness.hpp"
#include "core/input_error.hpp"
#include "core/scenario/scenario.hpp"
#include "sim/faults/campaign_setup.hpp"
#include "sim/faults/fail_slow.hpp"
#include "tests/sim/faults/campaign_fixture.hpp"

using namespace parashift;
namespace fs = std::filesystem;

namespace {

constexpr double kHourS = 3600.0;

// The small campaign (tp8 pp4 dp8 on 256 H100s, 16 spares), replicas in
// another rack. One seed, no failures (an empty trace), one slow event on GPU 0 from
// 1,000 s for 10 h at `factor`; the campaign's JSON.
nlohmann::json one_episode(const std::string& factor, const std::vector<std::string>& extra = {}) {
  const fs::path scenario = test::write_file("slow.yaml", test::kScenario);
  const fs::path trace = test::write_file("none.csv", "time_s,kind,target\n");
  const fs::path out = scenario.parent_path() / "slow.json";
  std::vector<std::string> args{
      "faults",
      scenario.string(),
      "--seeds",
      "1",
      "--trace",
      trace.string(),
      "--json",
      out.string(),
      "--set",
      "faults.events=[{kind: slow, gpu: 0, factor: " + factor + ", at: 1000s, duration: 10h}]",
      "--set",
      "faults.snapshot.domain=rack"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = test::run_parashift(args);
  REQUIRE_MESSAGE(r.status == 0, r.err);
  return nlohmann::json::parse(test::read_file(out));
}

}  // namespace

TEST_CASE("fail-slow episodes are drawn at GPUs / MTBF with exponential durations") {
  core::FailSlowConfig c;
  c.gpu_mtbf_hours = 1000;
  c.factor = 1.5;
  c.duration_ns = core::seconds_to_ns(2 * kHourS);
  // 500 GPUs at 1,000 h over 4,000 h: 2,000 expected (Poisson sigma 45, so
  // 10% is over 4 sigma); mean duration 2 h (sigma of the mean over 2,000
  // exponentials: 2 h / 45, so 10% is 4.5 sigma; the horizon cuts a few).
  const core::TimeNs horizon = core::seconds_to_ns(4000 * kHourS);
  const auto episodes = sim::draw_fail_slow(c, 500, 11, horizon);
  CHECK(static_cast<double>(episodes.size()) == doctest::Approx(2000).epsilon(0.10));
  double total_s = 0;
  for (const auto& e : episodes) {
    CHECK(e.gpu >= 0);
    CHECK(e.gpu < 500);
    CHECK(e.factor == 1.5);
    CHECK(e.until_ns > e.at_ns);
    CHECK(e.until_ns <= horizon);
    total_s += core::ns_to_s(e.until_ns - e.at_ns);
  }
  CHECK(total_s / static_cast<double>(episodes.size()) / kHourS ==
        doctest::Approx(2.0).epsilon(0.10));
  CHECK(sim::draw_fail_slow(c, 500, 11, horizon).size() == episodes.size());  // deterministic
  c.gpu_mtbf_hours = 0;
  CHECK(sim::draw_fail_slow(c, 500, 11, horizon).empty());
}

TEST_CASE("scheduled slow events become episodes: a node's GPUs, bad indices named") {
  core::FaultConfig c;
  core::FaultEvent e;
  e.kind = core::FaultEventKind::Slow;
  e.where = "s.yaml:3:5: faults.events[0]";
  e.node = 2;
  e.factor = 2;
  e.at_ns = 100;
  c.events.push_back(e);
  // Host 2 of 8-GPU hosts: GPUs 16-23, until the horizon (no duration).
  const auto episodes = sim::scheduled_slow_episodes(c, 64, 8, 1000);
  REQUIRE(episodes.size() == 8);
  CHECK(episodes.front().gpu == 16);
  CHECK(episodes.back().gpu == 23);
  CHECK(episodes.front().until_ns == 1000);
  c.events[0].node = 8;  // hosts 0-7
  CHECK_THROWS_WITH_AS(sim::scheduled_slow_episodes(c, 64, 8, 1000),
                       "s.yaml:3:5: faults.events[0].node: host 8 does not exist; expected a "
                       "host in 0..7",
                       core::InputError);
  c.events[0].node = -1;
  c.events[0].gpu = 64;
  CHECK_THROWS_WITH_AS(sim::scheduled_slow_episodes(c, 64, 8, 1000),
                       "s.yaml:3:5: faults.events[0].gpu: GPU 64 does not exist; expected a GPU "
                       "in 0..63",
                       core::InputError);
}

TEST_CASE("overlap of a span with sorted intervals") {
  const std::vector<sim::Interval> up{{0, 10}, {20, 30}, {40, 50}};
  // [5, 45): 5 of the first, all 10 of the second, 5 of the third = 20 ns.
  CHECK(sim::overlap_s(up, {5, 45}) == doctest::Approx(20e-9));
  CHECK(sim::overlap_s(up, {10, 20}) == 0);
  CHECK(sim::overlap_s(up, {60, 70}) == 0);
}

TEST_CASE("overlapping slow spans count once, at the largest share") {
  // Trained [0, 100) and [200, 300). Spans: [50, 250) losing 0.2 and
  // [80, 120) losing 0.5. Over [50, 80): 30 x 0.2 = 6; [80, 100): 20 x 0.5
  // = 10 ([100, 120) is not trained); [200, 250): 50 x 0.2 = 10. Total 26
  // ns, where counting each span alone gives 100 x 0.2 + 20 x 0.5 = 30.
  const std::vector<sim::Interval> up{{0, 100}, {200, 300}};
  const std::vector<sim::SlowSpan> spans{{{50, 250}, 0.2}, {{80, 120}, 0.5}};
  CHECK(sim::slow_lost_s(up, spans) == doctest::Approx(26e-9));
  // The same spans, later one first, and an empty one: the same.
  const std::vector<sim::SlowSpan> again{{{80, 120}, 0.5}, {{10, 10}, 0.9}, {{50, 250}, 0.2}};
  CHECK(sim::slow_lost_s(up, again) == doctest::Approx(26e-9));
  // Two equal shares over the same time: once.
  CHECK(sim::slow_lost_s(up, {{{0, 100}, 0.3}, {{0, 100}, 0.3}}) == doctest::Approx(30e-9));
}

TEST_CASE("a fail-slow GPU: the snapshot policy moves its rank to a spare, the baseline endures") {
  // GPU 0 at 2x for 10 h of the 2-day run. The baseline trains through it:
  // it loses share s = (36,000 s / 172,800 s) x (1 - it / slowed) of the
  // wall time, where `slowed` is the simulated iteration with that GPU slow;
  // so slowed = it / (1 - s x 172,800 / 36,000). The snapshot policy's
  // straggler detector names the GPU 5 slowed iterations in (window 5,
  // patience 3), and the ranks of its host move to a spare host: it loses 5 x slowed x
  // (1 - it / slowed) = 5 (slowed - it) of the same 172,800 s.
  const auto j = one_episode("2");
  CHECK(j["fail_slow_episodes"] == 1);
  const double it = j["iteration_s"];
  const auto& snap = j["policies"]["snapshot"];
  const auto& base = j["policies"]["baseline"];
  const double base_lost = base["fail_slow_lost"]["p50"];
  const double share = base_lost * 172800.0 / 36000.0;
  REQUIRE(share > 0.05);  // a slow GPU slows the whole synchronous job
  const double slowed = it / (1 - share);
  CHECK(snap["migrations"] == 1);
  CHECK(base["migrations"] == 0);
  CHECK(double(snap["fail_slow_lost"]["p50"]) ==
        doctest::Approx(5 * (slowed - it) / 172800.0).epsilon(1e-6));
  CHECK(double(snap["ettr"]["p50"]) > double(base["ettr"]["p50"]) + 0.5 * base_lost);
  // The move drains like maintenance: nothing lost at the interruption.
  CHECK(double(snap["lost_work_s"]["max"]) == 0);

  // No spare: the snapshot policy endures it too, over the same training
  // time (no interruption), so it loses exactly the baseline's share.
  const auto no_spare = one_episode("2", {"--set", "faults.spares=0"});
  CHECK(no_spare["policies"]["snapshot"]["migrations"] == 0);
  CHECK(double(no_spare["policies"]["snapshot"]["fail_slow_lost"]["p50"]) ==
        doctest::Approx(double(no_spare["policies"]["baseline"]["fail_slow_lost"]["p50"])));
  // Below the detector's 1.15 threshold the GPU is never named: no move.
  const auto mild = one_episode("1.1");
  CHECK(mild["policies"]["snapshot"]["migrations"] == 0);
  CHECK(double(mild["policies"]["snapshot"]["fail_slow_lost"]["p50"]) > 0);
}

TEST_CASE("a shrunk plan takes the time of its shape simulated with at most 1/16 more replicas") {
  // tp8 pp2 dp16 on the 256-GPU cluster, 32 sequences per replica. dp 15 is
  // within 1/16 of dp 16 (15 x 16 >= 16 x 15): it takes dp 16's time and
  // nothing new is simulated. dp 14 (14 x 16 = 224 < 240) is simulated.
  const core::Scenario s =
      core::parse_scenario(test::kScenario, "slow.yaml",
                           {"plan={tp: 8, pp: 2, dp: 16, schedule: 1f1b, recompute: selective, "
                            "sequence_parallel: true, optimizer_sharding: distributed}"});
  sim::PlanTimes times(s);
  core::ParallelPlan plan = s.plan;
  const core::TimeNs full = times.get(plan).iteration_ns;
  CHECK(times.simulated() == 1);
  plan.dp = 15;
  plan.global_batch = 15 * 32;
  CHECK(times.get(plan).iteration_ns == full);
  CHECK(times.simulated() == 1);
  plan.dp = 14;
  plan.global_batch = 14 * 32;
  times.get(plan);
  CHECK(times.simulated() == 2);
  // Another shape (GPipe) on 15 replicas is not a stand-in's business.
  plan.dp = 15;
  plan.global_batch = 15 * 32;
  plan.schedule = core::Schedule::GPipe;
  times.get(plan);
  CHECK(times.simulated() == 3);
}
