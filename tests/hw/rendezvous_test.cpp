// The NCCL communicator's send protocol (hw/comm/deferred_sends.hpp) on a
// rendezvous model of NCCL (tests/hw/rendezvous_communicator.hpp): the
// executor's pipelines, layer moves and snapshot ring complete, with the
// losses of the eager thread group; issuing each send on its own, as the
// communicator once did, deadlocks 1F1B on the same model.
#include <doctest/doctest.h>

#include <exception>
#include <functional>
#include <mutex>
#include <thread>

#include "hw/comm/deferred_sends.hpp"
#include "hw/comm/thread_communicator.hpp"
#include "hw/hw_error.hpp"
#include "tests/hw/hw_test_model.hpp"
#include "tests/hw/rendezvous_communicator.hpp"

using namespace parashift;

namespace {

using Group = std::vector<std::unique_ptr<hw::Communicator>>;
// Runs before iteration i on every rank (directives), may be empty.
using BeforeStep = std::function<void(hw::HwBackend&, int)>;

// Rank 0's losses over `iterations` of `plan`, every rank a thread on its
// communicator of `group`; the first rank's exception, if any, is rethrown.
std::vector<double> train(Group& group, const core::ParallelPlan& plan, int iterations,
                          const std::string& job, const BeforeStep& before = {},
                          int ranks_per_node = 0) {
  std::vector<double> losses;
  std::exception_ptr failure;
  std::mutex mutex;
  std::vector<std::thread> threads;
  for (std::size_t r = 0; r < group.size(); ++r)
    threads.emplace_back([&, r] {
      try {
        auto options = test::tiny_options(hw::OptimizerKind::Adam, job);
        options.ranks_per_node = ranks_per_node;
        hw::HwBackend backend(test::tiny_model(), test::kTinySeq, 3, plan, options, *group[r]);
        for (int i = 0; i < iterations; ++i) {
          if (before) before(backend, i);
          backend.step(plan);
          if (r == 0) losses.push_back(backend.last_loss());
        }
        backend.remove_snapshots();
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!failure) failure = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);
  return losses;
}

Group deferred(int size) {
  // Nothing here waits more than milliseconds; 20 s only ends a real deadlock.
  return test::make_rendezvous_group(size, test::SendMode::Deferred, std::chrono::seconds(20));
}

}  // namespace

TEST_CASE("deferred sends: a header receive takes each peer's sends up to its next payload") {
  hw::DeferredSends sends;
  const auto h1 = sends.queue(1, true);   // id 0: to rank 1, a length
  const auto p1 = sends.queue(1, false);  // id 1: its payload
  const auto h2 = sends.queue(2, true);   // id 2: to rank 2, a length
  const auto h1b = sends.queue(1, true);  // id 3: rank 1's next length, behind payload 1
  const auto p2 = sends.queue(2, false);  // id 4
  // Rank 1: length 0, then stopped by its payload (so length 3 waits too);
  // rank 2: length 2, then stopped by payload 4.
  CHECK(sends.take(true) == std::vector<std::size_t>{h1, h2});
  CHECK(sends.take(true).empty());  // nothing more before those payloads
  CHECK(sends.take(false) == std::vector<std::size_t>{p1, h1b, p2});
  CHECK_FALSE(sends.empty());
  sends.forget_issued();
  CHECK(sends.empty());
}

TEST_CASE("rendezvous model: the executor's pipelines complete with deferred sends") {
  // 1F1B with 4 micro-batches on 2 and 4 stages (every stage both sends and
  // receives while others wait), tensor-parallel stages, data-parallel
  // replicas with GPipe: the same losses as the eager thread group.
  struct Case {
    int tp, pp, dp;
    core::Schedule schedule;
  };
  for (const Case c :
       {Case{1, 2, 1, core::Schedule::OneFOneB}, Case{1, 4, 1, core::Schedule::OneFOneB},
        Case{2, 2, 1, core::Schedule::OneFOneB}, Case{1, 2, 2, core::Schedule::GPipe}}) {
    auto plan = test::tiny_plan(c.tp, c.pp, c.dp);
    plan.schedule = c.schedule;
    CAPTURE(plan.label());
    Group reference = hw::make_thread_group(plan.gpus());
    Group model = deferred(plan.gpus());
    const auto expected = train(reference, plan, 3, "rdv-ref");
    const auto got = train(model, plan, 3, "rdv");
    CHECK(got == expected);
  }
}

TEST_CASE("rendezvous model: layer moves and the snapshot ring complete with deferred sends") {
  // pp 2, dp 2 on 4 ranks, 2 per node: before iteration 2 layers move
  // [2,2] -> [3,1] (send_bytes between stages); before iteration 3 a snapshot
  // goes round the ring (every rank sends its shard to the next node and
  // receives its ward's) and is restored. Losses equal the thread group's.
  const auto plan = test::tiny_plan(1, 2, 2);
  const BeforeStep directives = [](hw::HwBackend& backend, int i) {
    if (i == 2) backend.apply({core::RepartitionDirective{{3, 1}}, "test", 0});
    if (i == 3) {
      backend.apply({core::SnapshotDirective{3}, "test", 0});
      backend.apply({core::RestoreDirective{3}, "test", 0});
    }
  };
  Group reference = hw::make_thread_group(4);
  Group model = deferred(4);
  const auto expected = train(reference, plan, 5, "rdv-moves-ref", directives, 2);
  const auto got = train(model, plan, 5, "rdv-moves", directives, 2);
  CHECK(got.size() == 5);
  CHECK(got == expected);
}

TEST_CASE("rendezvous model: each send issued on its own deadlocks 1F1B") {
  // Stage 0 sends F0, F1 and then receives B0; stage 1 receives F0, sends B0
  // and then receives F1. With a communicator's operations in order, stage
  // 0's F1 waits for stage 1's receive of F1, queued behind its send of B0,
  // which waits for stage 0's receive of B0, queued behind F1: a cycle.
  const auto plan = test::tiny_plan(1, 2, 1);
  Group model = test::make_rendezvous_group(2, test::SendMode::Eager, std::chrono::seconds(1));
  CHECK_THROWS_WITH_AS(train(model, plan, 1, "rdv-eager"), doctest::Contains("deadlock"),
                       hw::HwError);
}

TEST_CASE("rendezvous model: without the header rule the snapshot ring deadlocks") {
  // dp 2 on 2 ranks, one per node: each rank sends its shard to the other
  // and receives the other's. Issuing the queued payload with the header
  // receive puts each rank's payload send in a group that waits for the
  // other's payload receive, which comes only after the other's group
  // completes: a cycle. The header rule (hw::DeferredSends) sends only the
  // lengths first (the moves case above completes with it).
  const auto plan = test::tiny_plan(1, 1, 2);
  const BeforeStep snapshot = [](hw::HwBackend& backend, int i) {
    if (i == 1) backend.apply({core::SnapshotDirective{1}, "test", 0});
  };
  Group model =
      test::make_rendezvous_group(2, test::SendMode::DeferredAll, std::chrono::seconds(1));
  CHECK_THROWS_WITH_AS(train(model, plan, 2, "rdv-no-header", snapshot, 1),
                       doctest::Contains("deadlock"), hw::HwError);
}
