// rank_sync_choices: the `sync` module's candidates and their order.
#include <doctest/doctest.h>

#include <memory>

#include "core/controller/sync_policy.hpp"
#include "core/cost/estimate.hpp"
#include "core/device_spec.hpp"
#include "core/scenario/cluster_view.hpp"
#include "core/scenario/scenario.hpp"

using namespace parashift::core;

namespace {

JobModel slow_rails_job(double inter_node_Bps) {
  const Scenario s =
      load_scenario(std::string(PARASHIFT_SOURCE_DIR) + "/scenarios/adapt-sync.yaml", {});
  JobModel job;
  job.plan = s.plan;
  auto inputs = std::make_shared<CostInputs>();
  inputs->model = s.model;
  inputs->device = s.device;
  inputs->cluster = cluster_view_of(s.topology, s.device);
  inputs->cluster.inter_node_Bps = inter_node_Bps;
  inputs->seq_len = s.training.seq_len;
  job.cost = inputs;
  job.total_iterations = 100;
  return job;
}

}  // namespace

TEST_CASE("sync candidates: every allowed pair the plan admits, fastest first") {
  JobModel job = slow_rails_job(50e9 / 8);
  SyncPolicyOptions o;
  const auto all = rank_sync_choices(job, o, nullptr);
  // flat and hierarchical x none, int8, powersgd:4, :16, :64 (Llama-3 8B at
  // tp 2: the smallest matrix has 2048 rows, so every rank is admitted).
  CHECK(all.size() == 10);
  for (std::size_t i = 1; i < all.size(); ++i)
    CHECK(all[i - 1].iteration_ns <= all[i].iteration_ns);
  // On 50 Gb/s rails the fastest compresses and the uncompressed flat sync
  // is slower than it.
  CHECK(all.front().compression.enabled());
  o.powersgd = false;
  o.int8 = false;
  o.hierarchical = false;
  const auto none = rank_sync_choices(job, o, nullptr);
  REQUIRE(none.size() == 1);
  CHECK(none.front().label() == "flat + none");
  o.topk = true;
  CHECK(rank_sync_choices(job, o, nullptr).size() == 2);
  // Without cost inputs there is nothing to price.
  job.cost.reset();
  CHECK(rank_sync_choices(job, SyncPolicyOptions{}, nullptr).empty());
}

TEST_CASE("sync candidates price with the cost model's estimate") {
  const JobModel job = slow_rails_job(50e9 / 8);
  for (const SyncChoice& c : rank_sync_choices(job, SyncPolicyOptions{}, nullptr)) {
    ParallelPlan p = job.plan;
    p.sync = c.sync;
    p.compression = c.compression;
    CHECK(c.iteration_ns == estimate_iteration(job.cost->model, job.cost->device, job.cost->cluster,
                                               p, job.cost->seq_len)
                                .total_ns);
  }
}
