// The controller on a measured machine's noise, deterministically: reports
// the hw executor measured on the controller contract's pp 4 x dp 4 job
// (tests/hw/record_trace.cpp, on the 2-vCPU dev VM), fed to the live policy
// iteration by iteration. The contract's live runs on the executor
// (tests/hw/hw_contract_test.cpp) meet the machine's noise of the moment;
// these replay recorded runs, the same on every machine.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "contract_support.hpp"
#include "core/controller/controller.hpp"
#include "fake_backend.hpp"

using namespace parashift;

namespace {

constexpr int kRanks = 16;

// A Backend that plays recorded reports back; it cannot apply a directive
// (the recording ran without one), so it counts them instead.
class ReplayBackend : public core::Backend {
 public:
  explicit ReplayBackend(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read " + path);
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream fields(line);
      std::vector<core::TimeNs> v;
      for (std::string field; std::getline(fields, field, ',');) v.push_back(std::stoll(field));
      if (v.size() != 1 + 2 * kRanks) throw std::runtime_error("bad line in " + path + ": " + line);
      core::StepReport r;
      r.iteration = static_cast<std::int64_t>(reports_.size());
      r.iteration_ns = v[0];
      r.rank_compute_ns.assign(v.begin() + 1, v.begin() + 1 + kRanks);
      r.rank_exposed_comm_ns.assign(v.begin() + 1 + kRanks, v.end());
      reports_.push_back(std::move(r));
    }
  }
  std::size_t size() const { return reports_.size(); }
  core::Capabilities capabilities() const override {
    core::Capabilities caps;
    caps.live_repartition = true;  // as the executor: the balancer may act
    caps.ranks = kRanks;
    return caps;
  }
  core::StepReport step(const core::ParallelPlan&) override { return reports_.at(next_++); }
  void apply(const core::Directive&) override { ++applied_; }
  int applied() const { return applied_; }

 private:
  std::vector<core::StepReport> reports_;
  std::size_t next_ = 0;
  int applied_ = 0;
};

core::JobModel recorded_job(std::int64_t total_iterations) {
  core::ParallelPlan plan;
  plan.pp = 4;
  plan.dp = 4;
  plan.global_batch = 32;
  return test::contract_job(test::ContractCase{plan, 32}, total_iterations);
}

std::string recorded(const std::string& name) {
  return std::string(PARASHIFT_SOURCE_DIR) + "/tests/core/controller/data/" + name;
}

}  // namespace

TEST_CASE("a measured healthy run of the hw executor, replayed, stays quiet with a window of 7") {
  // 1,000 healthy iterations, the worst for the default window of six
  // recordings. Each rank's per-layer time over its iteration's median
  // spreads by 8.8% (one standard deviation), 1.9% of the samples are 1.15x
  // or more, single ones up to 3.1x, and the whole machine changes speed by
  // up to 2.7x from one iteration to the next.
  const ReplayBackend replay(recorded("hw-healthy-pp4dp4.csv"));
  REQUIRE(replay.size() == 1000);
  const core::JobModel job = recorded_job(1'000'000);
  // The whole trace with both modules on and `window`, up to the first
  // directive (the recording cannot follow one); the controller's log.
  auto replayed = [&](int window) {
    ReplayBackend run = replay;
    core::Controller ctl(job,
                         test::policy_from_yaml("{window: " + std::to_string(window) +
                                                ", straggler: {}, balance: {}}"),
                         run.capabilities());
    for (std::size_t i = 0; i < run.size() && run.applied() == 0; ++i) ctl.step(run);
    return ctl.log();
  };
  // A median over 7 iterations needs 4 slow samples to move. The machine's
  // bursts scramble most ranks for a few iterations and are left out
  // (state_estimate.hpp); what remains does not give one rank 4 in 7.
  const auto quiet = replayed(7);
  for (const auto& d : quiet) MESSAGE(d.iteration, " ", d.module, ": ", d.message);
  CHECK(quiet.empty());
  // The default window of 5 moves with 3. At iterations 179 and 181 stage 0
  // (ranks 0, 4, 8, 12) ran 1.2-1.3x, and rank 12 2.2x at 180: 4 ranks of
  // 16, under half, so no burst, and rank 12 has 3 slow samples. It is named and its replica given
  // a micro-batch less at 183. That is why the hw contract harness runs its healthy case with a
  // window of 7 (controller_contract.hpp).
  const auto noisy = replayed(5);
  REQUIRE_FALSE(noisy.empty());
  CHECK(noisy.front().iteration == 183);
  CHECK(noisy.front().message.rfind("gpu 12 ", 0) == 0);
  CHECK(std::any_of(noisy.begin(), noisy.end(), [](const core::Decision& d) { return d.applied; }));
}

TEST_CASE("measured runs with one GPU slowed 1.5x and 2x, replayed: named as the contract says") {
  // 40 iterations each, rank 5's compute stretched from iteration 20 on (the
  // contract's detection case). The checks are the contract's for a measured
  // backend (controller_contract.hpp): named between onset + 2 and onset + 10,
  // the right GPU, its slowdown within 10%.
  for (const auto& [file, factor] :
       {std::pair<std::string, double>{"hw-slow-1.5x-pp4dp4.csv", 1.5},
        std::pair<std::string, double>{"hw-slow-2x-pp4dp4.csv", 2.0}}) {
    CAPTURE(file);
    ReplayBackend replay(recorded(file));
    REQUIRE(replay.size() == 40);
    core::Controller ctl(recorded_job(1000), test::policy_from_yaml("{straggler: {}}"),
                         replay.capabilities());
    const int onset = 20;
    int named_at = -1;
    for (int i = 0; i < 40 && named_at < 0; ++i) {
      ctl.step(replay);
      if (!ctl.stragglers().empty()) named_at = i;
    }
    // In the 1.5x recording a burst at iterations 16-18 scrambled most ranks
    // (one rank's times over the median: 1.36, 1.56, 1.32); counted as it
    // was measured it named that healthy rank at iteration 20.
    CHECK(named_at >= onset + 2);
    CHECK(named_at - onset <= 10);
    REQUIRE(ctl.stragglers().size() == 1);
    const auto& f = ctl.stragglers()[0];
    CHECK(f.kind == core::StragglerFinding::Kind::Gpu);
    CHECK(f.id == 5);
    CHECK(f.slowdown == doctest::Approx(factor).epsilon(0.10));
  }
}
