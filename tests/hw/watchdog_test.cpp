// hw::Watchdog over a two-rank thread group: a collective one rank waits in
// because its peer has not come is reported once, naming the rank, group and
// call; calls that finish are never reported. The test waits for the report
// itself (a future), not for a time, so a slow machine only makes it slower.
#include "hw/comm/watchdog.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "hw/comm/thread_communicator.hpp"

using namespace parashift;
using namespace std::chrono_literals;

TEST_CASE("a stalled all-reduce is named with its rank, group and size") {
  auto group = hw::make_thread_group(2);
  std::promise<std::string> reported;
  auto report = reported.get_future();
  int reports = 0;
  hw::Watchdog dog(20ms, 0, [&](const std::string& message) {
    if (reports++ == 0) reported.set_value(message);
  });
  hw::WatchedCommunicator rank0(*group[0], dog, "world");
  std::vector<float> data(1024, 1.0f);
  // Rank 0 enters the all-reduce alone; rank 1 comes only once the stall is
  // reported, which lets rank 0 finish.
  std::thread first([&] { rank0.all_reduce_sum(std::span<float>(data)); });
  REQUIRE(report.wait_for(600s) == std::future_status::ready);
  std::vector<float> other(1024, 2.0f);
  group[1]->all_reduce_sum(std::span<float>(other));
  first.join();
  const std::string message = report.get();
  CHECK(message.find("watchdog: rank 0: all_reduce_sum of 1024 floats on group world (rank 0 of "
                     "2) made no progress for ") == 0);
  CHECK(message.find("s (timeout 20 ms)") != std::string::npos);
  CHECK(data[0] == 3.0f);  // the call itself completed: 1 + 2
  CHECK(reports == 1);     // once per run
}

TEST_CASE("calls that finish are never reported, and split groups carry the name") {
  auto group = hw::make_thread_group(2);
  int reports = 0;
  {
    hw::Watchdog dog(1h, 0, [&](const std::string&) { ++reports; });
    hw::WatchedCommunicator rank0(*group[0], dog, "world");
    hw::Watchdog dog1(1h, 1, [&](const std::string&) { ++reports; });
    hw::WatchedCommunicator rank1(*group[1], dog1, "world");
    std::unique_ptr<hw::Communicator> sub0, sub1;
    std::thread t([&] {
      sub1 = rank1.split(7, 1);
      rank1.barrier();
    });
    sub0 = rank0.split(7, 0);
    rank0.barrier();
    t.join();
    CHECK(sub0->size() == 2);
    // A split group is watched too: a stall on it would be reported as "world/7".
    REQUIRE(dynamic_cast<hw::WatchedCommunicator*>(sub0.get()) != nullptr);
  }
  CHECK(reports == 0);
}
