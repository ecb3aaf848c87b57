// The controller contract (tests/core/controller/controller_contract.hpp) on
// the CPU executor's real HwBackend ranks (threads of this process), timed
// on the counted clock (contract_harness.hpp, CountedHwHarness): slowdowns
// are counted work, so every check is the exact one the fake is held to
// and the outcome does not depend on the machine. In CI (no timing label).
// The healthy case (1,000 iterations, about a minute of real compute) is
// left out here: on the counted clock there is no noise for it to resist;
// the measured harness runs it (hw_contract_test.cpp, label timing).
#include "contract_harness.hpp"
#include "controller_contract.hpp"

TEST_CASE_TEMPLATE_INVOKE(contract_detects_slow_gpu, parashift::test::CountedHwHarness);
TEST_CASE_TEMPLATE_INVOKE(contract_repartition, parashift::test::CountedHwHarness);
TEST_CASE_TEMPLATE_INVOKE(contract_rebalance, parashift::test::CountedHwHarness);
TEST_CASE_TEMPLATE_INVOKE(contract_cost_gate, parashift::test::CountedHwHarness);
TEST_CASE_TEMPLATE_INVOKE(contract_replan, parashift::test::CountedHwHarness);
TEST_CASE_TEMPLATE_INVOKE(contract_recovery, parashift::test::CountedHwHarness);

namespace {

// The contract's recovery case on the executor, with rank 0's loss of every
// iteration that ran (by iteration: a replayed one overwrites the first
// run's) and the two restores' statistics.
struct Recovered {
  std::vector<double> loss;  // by iteration, 0-9
  std::vector<parashift::hw::RestoreStats> restores;
};

Recovered recover(bool fail) {
  using namespace parashift;
  test::ContractCase c = test::pipeline_case(2, 2, 8, 8);
  c.spare_gpus = 1;
  test::CountedHwHarness h(c);
  core::JobRunner runner(h.backend(), c.plan);
  runner.set_snapshot_every(2, "contract");
  runner.set_recovery(10);
  runner.set_shrink(test::keep_shape_shrink);
  Recovered out;
  out.loss.assign(10, 0.0);
  while (runner.next_iteration() < 10) {
    const std::int64_t at = runner.next_iteration();
    if (fail && at == 3 && runner.restarts() == 0) h.fail_gpu(1);
    if (fail && at == 6 && runner.restarts() == 1) h.fail_gpu(4);
    const int restarts = runner.restarts();
    REQUIRE(runner.step());
    if (runner.restarts() != restarts) {
      out.restores.push_back(h.rank(0).last_restore());
      continue;
    }
    out.loss.at(static_cast<std::size_t>(at)) = h.rank(0).last_loss();
  }
  return out;
}

}  // namespace

TEST_CASE("the executor's recovery replays the uninterrupted run's losses, then trains on shrunk") {
  // Snapshots before iterations 0, 2, 4, ...; GPU 1 fails during 3, so the
  // job restarts with rank 1 on GPU 4 and replays 2-5 from v2: rank 1's
  // shard came from its replica on GPU 2's host (GPU 1's memory is gone),
  // the other three from their own hosts, so every rank holds the bits it
  // held before 2 and the replayed losses equal the uninterrupted run's to
  // the last digit. GPU 4 fails during 6 with no spare left: pp2 dp1 on
  // GPUs 0 and 2 restores v6 (written under pp2 dp2) resharded, and trains
  // on half the batch from there: its losses leave the uninterrupted run's.
  const Recovered healthy = recover(false);
  const Recovered failed = recover(true);
  REQUIRE(failed.restores.size() == 2);
  for (std::size_t i = 0; i < 6; ++i) {
    CAPTURE(i);
    CHECK(failed.loss[i] == healthy.loss[i]);
  }
  const parashift::hw::RestoreStats& remap = failed.restores[0];
  CHECK(remap.version == 2);
  CHECK_FALSE(remap.resharded);
  CHECK(remap.shards_fetched == 1);
  const parashift::hw::RestoreStats& shrink = failed.restores[1];
  CHECK(shrink.version == 6);
  CHECK(shrink.resharded);
  CHECK(failed.loss[7] != healthy.loss[7]);
}
