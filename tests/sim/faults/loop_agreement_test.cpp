// The fault campaign's fast path (sim/faults: one seed's draw played as
// events in time, iterations priced per plan and placement) against the one
// loop on the same draw (`simulate` over the same wall time: JobRunner over
// SimBackend, every iteration stepped and timed on where its ranks run).
// Each lost rank's recovery is decided by the same core functions in both
// (remap_to_spares, shrink_and_replan, regrow_plan); this checks that they
// also lose the same share of the time.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "core/scenario/scenario.hpp"
#include "sim/faults/campaign.hpp"
#include "sim/faults/campaign_setup.hpp"
#include "sim/run.hpp"

using namespace parashift;

namespace {

const std::string kSmall = std::string(PARASHIFT_SOURCE_DIR) + "/tests/tools/data/small.yaml";

struct Agreement {
  double campaign = 0;  // ETTR of the campaign's seed 0 over 0.1 day
  double loop = 0;      // the loop's trained tokens over what a healthy run trains in that time
  int restarts = 0;
};

// tests/tools/data/small.yaml (tp2 pp2 dp4 on 2 DGX hosts; spares on a third
// host; seed 7) over 0.1 day = 8,640 s, snapshots every 100 iterations in the
// loop and every 84 s of work in the campaign (100 x 0.8385 s).
Agreement agreement(const std::string& faults) {
  const std::string set =
      "faults={" + faults + ", snapshot: {every: 100, interval: 84s}, days: 0.1}";
  const core::Scenario scenario = core::load_scenario(kSmall, {set});
  const auto setup = sim::make_campaign_setup(scenario, *scenario.faults);
  sim::CampaignOptions options;
  options.seeds = 1;
  options.days = 0.1;
  const sim::CampaignResult campaign = sim::run_campaign(*setup, options);

  const core::Scenario timed = core::load_scenario(kSmall, {set, "run={duration: 8640s, seed: 7}"});
  const sim::RunSummary loop = sim::run_scenario(timed);
  // A wait for a repair past the 8,640 s ends the loop late; the tokens it
  // trained were all trained before it, inside the campaign's window.
  const double healthy_tokens = 8640.0 / core::ns_to_s(loop.healthy_iteration_ns) *
                                scenario.plan.global_batch * scenario.training.seq_len;
  return {campaign.snapshot.ettr.p50, loop.tokens / healthy_tokens, loop.restarts};
}

}  // namespace

TEST_CASE("a campaign's seed and the one loop on its draw lose the same share of the time") {
  // Each row's figures as measured (campaign / loop, %), and what it tries:
  struct Row {
    const char* faults;
    int min_restarts;
  };
  const Row rows[] = {
      // 89.53 / 88.16. GPUs 11 and 10 (a tensor-parallel pair) fail and move
      // to the spare host; then GPU 4: rank 4 alone there, its group split
      // over two hosts (1.14 s iterations against 0.84 s) until GPU 5 fails
      // and its rank joins rank 4. (Before a move could end a split in the
      // campaign, it kept the split to the end: 76.2 %.)
      {"gpu_mtbf_hours: 20, spares: 8, replace: gpu", 3},
      // 25.94 / 26.21. A GPU failure drains its host; after two, no spare host
      // is left and no replica is whole: both wait 48 h for the repair.
      {"gpu_mtbf_hours: 20, spares: 8", 2},
      // 83.16 / 85.30. No spares: the job shrinks to dp 3. The surviving
      // replicas keep their GPUs in both (the loop put rank r on the r-th
      // live GPU, splitting a tensor-parallel pair: 66.7 %).
      {"gpu_mtbf_hours: 20, spares: 0, replace: gpu, repair: 1h", 2},
      // 38.52 / 38.74. No spare host: the job waits an hour for host 0; host 1
      // fails during the wait, and the job waits for it from its failure
      // (the loop started that repair when it saw the failure, an hour
      // later, and failed GPU 7 again from a draw while it was out: 22.5 %).
      {"gpu_mtbf_hours: 20, spares: 0, repair: 1h", 2},
      // 62.89 / 61.46 and 91.53 / 89.04: a failure every 12 min over the 24
      // GPU slots, repairs after 20 min; hosts drained, and single GPUs moved.
      {"gpu_mtbf_hours: 5, spares: 8, repair: 20min", 3},
      {"gpu_mtbf_hours: 5, spares: 8, repair: 20min, replace: gpu", 3},
      // 40.35 / 39.80. Node failures (host memory dies with the node): host
      // 1 fails and its ranks move to the spare host 2, which then holds
      // host 0's replicas; host 2 fails, no spare is left and the job waits
      // 48 h; host 0 fails during the wait. Every copy of v5500's shards is
      // gone (host 0's own, host 2's replicas of them and the reverse), so
      // both restore the remote checkpoint of 3,600 s (v4100 in the loop)
      // and lose ~1,200 s of work. (Before the loop asked which replicas
      // survived and saw failures during a wait: 53.7 %.)
      {"node_mtbf_hours: 5, spares: 8", 3},
      // 41.31 / 40.77. No spares, repairs after an hour: host 0 fails, the
      // job waits for it; host 1 fails during the wait, taking the only
      // replica of host 0's ranks' newest version: the remote checkpoint.
      {"node_mtbf_hours: 5, spares: 0, repair: 1h", 2},
      // 47.95 / 48.09. NIC failures drain their hosts for an hour: the
      // second failure takes the spare host, the job waits for host 1; a
      // third fails host 0 during that wait, seen when it happens (the loop
      // saw it only after the wait: 55.0 %).
      {"nic_mtbf_hours: 10, spares: 8, repair: 1h", 4},
  };
  for (const Row& row : rows) {
    CAPTURE(row.faults);
    const Agreement a = agreement(row.faults);
    CAPTURE(a.campaign);
    CAPTURE(a.loop);
    CHECK(a.restarts >= row.min_restarts);
    // Within 3 points (2.5 the widest measured): the fast path prices a split
    // with one stand-in placement and takes a group rejoined on a spare host
    // as healthy (29 ms an iteration slower in the loop), and each loop
    // restart redoes up to 100 iterations where the campaign's interval
    // bounds the loss in time.
    CHECK(std::abs(a.campaign - a.loop) < 0.03);
  }
}
