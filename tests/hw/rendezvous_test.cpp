// The NCCL communicator's send protocol (hw/comm/deferred_sends.hpp) on a
// rendezvous model of NCCL (tests/hw/rendezvous_communicator.hpp): the
// executor's pipelines, layer moves and snapshot ring complete, with the
// losses of the eager thread group; issuing each send on its own, as the
// communicator once did, deadlocks interleaved 1F1B on the same model, and
// so does taking interleaving's inputs pass by pass rather than by steps.
#include <doctest/doctest.h>

#include "core/pipeline_schedule.hpp"
#include "hw/comm/deferred_sends.hpp"
#include "hw/comm/thread_communicator.hpp"
#include "hw/hw_error.hpp"
#include "tests/hw/group_training.hpp"
#include "tests/hw/rendezvous_communicator.hpp"

using namespace parashift;

namespace {

using test::BeforeStep;
using test::Group;

// Rank 0's losses over `iterations` of `plan` on `group`.
std::vector<double> train(Group& group, const core::ParallelPlan& plan, int iterations,
                          const std::string& job, const BeforeStep& before = {},
                          int ranks_per_node = 0) {
  test::GroupRun run;
  run.iterations = iterations;
  run.job = job;
  run.before = before;
  run.ranks_per_node = ranks_per_node;
  return test::train_group(group, plan, run);
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
  // replicas with GPipe, ZB-H1, and interleaved 1F1B (two chunks per stage:
  // activations and gradients both ways between each pair of stages, which
  // NCCL matches by order alone): the same losses as the eager thread group,
  // whose messages are matched by tag.
  struct Case {
    int tp, pp, dp;
    core::Schedule schedule;
    int virtual_stages = 1;
  };
  for (const Case c :
       {Case{1, 2, 1, core::Schedule::OneFOneB}, Case{1, 4, 1, core::Schedule::OneFOneB},
        Case{2, 2, 1, core::Schedule::OneFOneB}, Case{1, 2, 2, core::Schedule::GPipe},
        Case{1, 2, 1, core::Schedule::ZeroBubbleH1}, Case{1, 4, 1, core::Schedule::ZeroBubbleH1},
        Case{1, 2, 1, core::Schedule::Interleaved1F1B, 2},
        Case{2, 2, 1, core::Schedule::Interleaved1F1B, 2}}) {
    auto plan = test::tiny_plan(c.tp, c.pp, c.dp);
    plan.schedule = c.schedule;
    plan.virtual_stages = c.virtual_stages;
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

TEST_CASE("rendezvous model: each send issued on its own deadlocks interleaved 1F1B") {
  // pp 2 x 2 chunks. Stage 0 warms up with F0 F1 (chunk 0) and sends both;
  // stage 1 receives F0, sends its output (stage 0's chunk-1 input), then
  // receives F1. With a communicator's operations in order, stage 0's send
  // of F1 waits for stage 1's receive of F1, queued behind stage 1's send,
  // which waits for stage 0's receive of it, queued behind F1: a cycle.
  auto plan = test::tiny_plan(1, 2, 1);
  plan.schedule = core::Schedule::Interleaved1F1B;
  plan.virtual_stages = 2;
  Group model = test::make_rendezvous_group(2, test::SendMode::Eager, std::chrono::seconds(1));
  CHECK_THROWS_WITH_AS(train(model, plan, 1, "rdv-eager"), doctest::Contains("deadlock"),
                       hw::HwError);
}

namespace {

// Only the pipeline's messages of a pp-stage job with v chunks and m
// micro-batches (one float each), every stage a thread on `group`: a pass's
// input is received before it, its output queued after it, and queued
// sends posted on their own before a step that receives nothing, as the
// executor does; by_steps takes each core::stage_steps step's inputs
// together, otherwise each pass's alone. Throws the first rank's HwError.
void exchange(Group& group, core::Schedule schedule, int pp, int v, int m, bool by_steps) {
  test::run_ranks(pp, [&](int s) {
    hw::Communicator& comm = *group[static_cast<std::size_t>(s)];
    const int last = pp * v - 1, next = (s + 1) % pp, prev = (s + pp - 1) % pp;
    auto steps = core::stage_steps(schedule, pp, s, m, v);
    if (!by_steps) {
      std::vector<std::vector<core::PassOp>> passes;
      for (const auto& step : steps)
        for (const auto& op : step) passes.push_back({op});
      steps = passes;
    }
    float forward_in = 0, backward_in = 0, out = 1;
    for (std::size_t at = 0; at < steps.size(); ++at) {
      const auto& step = steps[at];
      std::vector<hw::RecvRequest> inputs;
      for (const auto& op : step) {
        const int g = core::virtual_stage(pp, s, op.chunk);
        if (op.kind == core::PassKind::Forward && g > 0)
          inputs.push_back({{&forward_in, 1}, prev, 2 * g});
        if (op.kind == core::PassKind::Backward && g < last)
          inputs.push_back({{&backward_in, 1}, next, 2 * g + 1});
      }
      if (at > 0 && inputs.empty()) comm.post_sends();
      comm.recv_group(inputs);
      for (const auto& op : step) {
        const int g = core::virtual_stage(pp, s, op.chunk);
        if (op.kind == core::PassKind::Forward && g < last) comm.send({&out, 1}, next, 2 * g + 2);
        if (op.kind == core::PassKind::Backward && g > 0) comm.send({&out, 1}, prev, 2 * g - 1);
      }
    }
    comm.flush_sends();
  });
}

}  // namespace

TEST_CASE("rendezvous model: interleaving needs a step's inputs received together") {
  // Interleaved pp 2 x 2 chunks, 4 micro-batches, pass by pass: stage 0 at
  // B1 (chunk 1) has queued its sends of B0 (chunk 1) and F3 (chunk 0) and
  // waits with them; stage 1 at B0 (chunk 0) has queued F2's output and
  // waits with it. Stage 1 receives F3 only after its group, whose send
  // stage 0 receives only after its own: a cycle. Steps (Megatron's pairing
  // of a forward with a backward) give both stages matching groups.
  Group passes = test::make_rendezvous_group(2, test::SendMode::Deferred, std::chrono::seconds(1));
  CHECK_THROWS_WITH_AS(exchange(passes, core::Schedule::Interleaved1F1B, 2, 2, 4, false),
                       doctest::Contains("deadlock"), hw::HwError);
  // By steps, every schedule completes, on 2 to 4 stages, 1 to 3 chunks.
  for (int pp = 2; pp <= 4; ++pp)
    for (int v = 1; v <= 3; ++v)
      for (const auto schedule :
           {core::Schedule::Interleaved1F1B, core::Schedule::ZeroBubbleH1, core::Schedule::GPipe}) {
        if (v > 1 && schedule != core::Schedule::Interleaved1F1B) continue;
        for (const int m : {pp, 2 * pp + (v == 1 ? 1 : 0)}) {
          CAPTURE(pp);
          CAPTURE(v);
          CAPTURE(m);
          Group steps = deferred(pp);
          CHECK_NOTHROW(exchange(steps, schedule, pp, v, m, true));
        }
      }
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
