// Virtual time (hw/comm/virtual_time.hpp): messages priced on a modelled
// link, counted compute on each rank's clock, and the executor's report read
// on it, so a pipeline's critical path shows the same on every machine.
#include <doctest/doctest.h>

#include <functional>
#include <thread>
#include <vector>

#include "contract_harness.hpp"
#include "hw/comm/thread_communicator.hpp"
#include "hw/comm/virtual_time.hpp"
#include "tests/hw/hw_test_model.hpp"

using namespace parashift;

namespace {

// Runs `work(rank, comm, clock)` on `ranks` threads, each rank's thread
// communicator wrapped on its own clock started at starts[rank].
std::vector<core::TimeNs> on_clocks(
    const std::vector<core::TimeNs>& starts, const hw::VirtualLink& link,
    const std::function<void(int, hw::Communicator&, hw::VirtualClock&)>& work) {
  const int ranks = static_cast<int>(starts.size());
  auto group = hw::make_thread_group(ranks);
  std::vector<hw::VirtualClock> clocks(starts.size());
  {
    std::vector<std::jthread> threads;
    for (int r = 0; r < ranks; ++r)
      threads.emplace_back([&, r] {
        const auto at = static_cast<std::size_t>(r);
        clocks[at].advance(starts[at]);
        hw::VirtualTimeCommunicator timed(*group[at], clocks[at], link);
        work(r, timed, clocks[at]);
      });
  }
  std::vector<core::TimeNs> out;
  for (const auto& c : clocks) out.push_back(c.now_ns());
  return out;
}

}  // namespace

TEST_CASE("virtual time: a collective starts at its last member and takes the ring's time") {
  // 1 GB/s, 1 us a step. An all-reduce of 1,000 floats (4,000 bytes) over 2
  // ranks: 2 (p-1) = 2 steps = 2,000 ns, 4,000 x 2 (p-1)/p = 4,000 bytes at
  // 1 GB/s = 4,000 ns; the members arrive at 1,000 and 5,000 ns, so both
  // end at 5,000 + 6,000 = 11,000 ns, with the sum intact.
  const hw::VirtualLink link{1e9, 1000};
  CHECK(hw::virtual_collective_ns(core::CollectiveKind::AllReduce, 4000, 2, link) == 6000);
  std::vector<float> sums(2);
  const auto ends = on_clocks({1000, 5000}, link, [&](int r, hw::Communicator& c, auto&) {
    std::vector<float> v(1000, static_cast<float>(r + 1));
    c.all_reduce_sum(std::span<float>(v));
    sums[static_cast<std::size_t>(r)] = v[999];
  });
  CHECK(ends == std::vector<core::TimeNs>{11000, 11000});
  CHECK(sums == std::vector<float>{3, 3});
  // One rank: no peers, no time.
  CHECK(hw::virtual_collective_ns(core::CollectiveKind::AllReduce, 4000, 1, link) == 0);
  // All-gather over 4 ranks of a 4,000-byte result: 3 steps + 3/4 x 4,000 bytes.
  CHECK(hw::virtual_collective_ns(core::CollectiveKind::AllGather, 4000, 4, link) == 6000);
}

TEST_CASE("virtual time: a message arrives at its send time plus latency and bytes over rate") {
  // Rank 0 at 1,000 ns sends 250 floats (1,000 bytes) and 3 raw bytes; the
  // float message lands at 1,000 + 1,000 + 1,000 = 3,000 ns on rank 1
  // (started at 0); the byte message, sent at the same 1,000 ns, at
  // 1,000 + 1,000 + 3 = 2,003, which is earlier: rank 1 stays at 3,000. The
  // sender pays nothing. Payloads arrive unchanged.
  const hw::VirtualLink link{1e9, 1000};
  std::vector<float> got(250);
  std::vector<std::byte> bytes;
  const auto ends = on_clocks({1000, 0}, link, [&](int r, hw::Communicator& c, auto&) {
    if (r == 0) {
      std::vector<float> v(250, 2.5F);
      c.send(v, 1, 7);
      const std::vector<std::byte> raw{std::byte{1}, std::byte{2}, std::byte{3}};
      c.send_bytes(raw, 1, 8);
      c.flush_sends();
    } else {
      c.recv(got, 0, 7);
      bytes = c.recv_bytes(0, 8);
    }
  });
  CHECK(ends == std::vector<core::TimeNs>{1000, 3000});
  CHECK(got == std::vector<float>(250, 2.5F));
  CHECK(bytes == std::vector<std::byte>{std::byte{1}, std::byte{2}, std::byte{3}});
}

TEST_CASE("virtual time: a split group shares its rank's clock") {
  // 4 ranks, split in pairs {0, 1} and {2, 3}; rank 3 starts at 8,000 ns.
  // A barrier (an all-reduce of nothing: 2 steps of 500 ns) in the pairs
  // moves 2 and 3 to 9,000 and 0 and 1 to 1,000; the world's barrier then
  // moves all four to 9,000 + 6 x 500 = 12,000.
  const hw::VirtualLink link{1e9, 500};
  std::vector<core::TimeNs> after_pair(4);
  const auto ends = on_clocks({0, 0, 0, 8000}, link, [&](int r, hw::Communicator& c, auto& clock) {
    auto pair = c.split(r / 2, r);
    pair->barrier();
    after_pair[static_cast<std::size_t>(r)] = clock.now_ns();
    c.barrier();
  });
  CHECK(after_pair == std::vector<core::TimeNs>{1000, 1000, 9000, 9000});
  CHECK(ends == std::vector<core::TimeNs>(4, 12000));
}

TEST_CASE("virtual time: the executor's iteration is its pipeline's critical path") {
  // pp 2, one layer per stage (tiny model cut to 2 layers), 2 micro-batches
  // of 1 sequence, 1F1B; counted units of 100 us (forward 1, backward 2),
  // messages free (no latency, 1e18 B/s). In units: stage 0 runs F0 [0,1]
  // F1 [1,2]; stage 1 F0 [1,2] B0 [2,4]; stage 0 B0 [4,6]; stage 1 F1 [4,5]
  // B1 [5,7]; stage 0 B1 [7,9]: the iteration is 9 units, 900 us. Stage 0
  // waits 2 units for B0's gradient and 1 for B1's, stage 1 1 unit for F0's
  // activation: exposed 300 and 100 us. With stage 1 at 2x: its F0 [1,3] B0
  // [3,7], stage 0 B0 [7,9], stage 1 F1 [7,9] B1 [9,13], stage 0 B1
  // [13,15]: 1,500 us, where counted compute alone shows only the slow
  // stage's 2 x (2 + 4) = 12 units, 1,200 us.
  core::ModelSpec model = test::tiny_model();
  model.layers = 2;
  core::ParallelPlan plan = test::tiny_plan(1, 2, 1);
  plan.global_batch = 2;
  for (const double slow : {1.0, 2.0}) {
    CAPTURE(slow);
    test::ThreadedHwBackend backend(model, test::kTinySeq, plan, hw::ComputeClock::Counted,
                                    hw::VirtualLink{1e18, 0});
    backend.rank(1).set_compute_slowdown(slow);
    for (int i = 0; i < 2; ++i) {
      const core::StepReport report = backend.step(plan);
      CHECK(report.iteration_ns == (slow == 1.0 ? 900'000 : 1'500'000));
      CHECK(report.rank_compute_ns[1] == (slow == 1.0 ? 600'000 : 1'200'000));
      if (slow == 1.0)
        CHECK(report.rank_exposed_comm_ns == std::vector<core::TimeNs>{300'000, 100'000});
    }
  }
}
