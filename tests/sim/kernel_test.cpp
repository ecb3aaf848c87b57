#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sim/kernel.hpp"

using parashift::sim::Kernel;

TEST_CASE("kernel runs events in time order and advances the clock") {
  Kernel k;
  std::vector<std::pair<long long, int>> seen;
  k.schedule_at(30, [&] { seen.emplace_back(k.now(), 3); });
  k.schedule_at(10, [&] { seen.emplace_back(k.now(), 1); });
  k.schedule_at(20, [&] { seen.emplace_back(k.now(), 2); });
  k.run();
  // Scheduled out of order (30, 10, 20): they run at 10, 20, 30.
  REQUIRE(seen.size() == 3);
  CHECK(seen[0] == std::pair<long long, int>{10, 1});
  CHECK(seen[1] == std::pair<long long, int>{20, 2});
  CHECK(seen[2] == std::pair<long long, int>{30, 3});
  CHECK(k.now() == 30);
  CHECK(k.executed() == 3);
}

TEST_CASE("same-time events run in insertion order") {
  Kernel k;
  std::string order;
  for (char c : std::string("abcdef")) k.schedule_at(5, [&order, c] { order += c; });
  k.run();
  CHECK(order == "abcdef");
}

TEST_CASE("events scheduled from events see the current time") {
  Kernel k;
  std::vector<long long> times;
  k.schedule_at(100, [&] {
    times.push_back(k.now());
    k.schedule_in(50, [&] { times.push_back(k.now()); });
    k.schedule_in(0, [&] { times.push_back(k.now()); });  // same time, runs next
  });
  k.run();
  // 100, then the zero-delay event at 100, then 100 + 50.
  CHECK(times == std::vector<long long>{100, 100, 150});
}

TEST_CASE("cancelled events never run and stop counting as pending") {
  Kernel k;
  int ran = 0;
  auto a = k.schedule_at(10, [&] { ran += 1; });
  auto b = k.schedule_at(20, [&] { ran += 10; });
  k.schedule_at(30, [&] { ran += 100; });
  CHECK(k.pending() == 3);
  k.cancel(b);
  CHECK_FALSE(k.is_pending(b));
  CHECK(k.pending() == 2);
  k.cancel(b);  // twice is a no-op
  CHECK(k.pending() == 2);
  k.run();
  CHECK(ran == 101);
  k.cancel(a);  // already ran: no-op
  CHECK(k.pending() == 0);
}

TEST_CASE("an event can cancel a later one") {
  Kernel k;
  bool late_ran = false;
  auto late = k.schedule_at(50, [&] { late_ran = true; });
  k.schedule_at(10, [&] { k.cancel(late); });
  k.run();
  CHECK_FALSE(late_ran);
  CHECK(k.now() == 10);
}

TEST_CASE("run_until stops at the horizon and moves the clock there") {
  Kernel k;
  int ran = 0;
  k.schedule_at(10, [&] { ++ran; });
  k.schedule_at(20, [&] { ++ran; });
  k.schedule_at(21, [&] { ++ran; });
  k.run_until(20);
  CHECK(ran == 2);  // events at exactly the horizon run
  CHECK(k.now() == 20);
  CHECK(k.pending() == 1);
  k.run_until(15);  // never moves backwards
  CHECK(k.now() == 20);
}
