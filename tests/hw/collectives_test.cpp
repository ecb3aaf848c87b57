// The float all-gather and reduce-scatter every communicator carries
// (sequence parallelism's collectives), on the thread group and the
// rendezvous model.
#include <doctest/doctest.h>

#include <thread>

#include "hw/comm/thread_communicator.hpp"
#include "hw/hw_error.hpp"
#include "tests/hw/rendezvous_communicator.hpp"

using namespace parashift;

namespace {

// Rank r contributes block values 100 r + i (i < 2 per block) to an all-gather
// and 10 r + b + i/10 in block b of a reduce-scatter input: small integers and
// tenths whose sums over 3 ranks are exact enough to compare to 1e-5.
void check_group(std::vector<std::unique_ptr<hw::Communicator>>& group) {
  const int n = static_cast<int>(group.size());
  std::vector<std::vector<float>> gathered(group.size()), scattered(group.size());
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      const auto f = [](int v) { return static_cast<float>(v); };
      const std::vector<float> mine{100.0f * f(r), 100.0f * f(r) + 1};
      auto& all = gathered[static_cast<std::size_t>(r)];
      all.resize(2 * group.size());
      group[static_cast<std::size_t>(r)]->all_gather(mine, all);
      std::vector<float> input;
      for (int b = 0; b < n; ++b)
        for (int i = 0; i < 2; ++i) input.push_back(10.0f * f(r) + f(b) + 0.1f * f(i));
      auto& out = scattered[static_cast<std::size_t>(r)];
      out.resize(2);
      group[static_cast<std::size_t>(r)]->reduce_scatter_sum(input, out);
    });
  for (auto& t : threads) t.join();
  for (int r = 0; r < n; ++r) {
    for (int q = 0; q < n; ++q) {
      const auto& all = gathered[static_cast<std::size_t>(r)];
      CHECK(all[2 * static_cast<std::size_t>(q)] == doctest::Approx(100.0 * q));
      CHECK(all[2 * static_cast<std::size_t>(q) + 1] == doctest::Approx(100.0 * q + 1));
    }
    // Block r summed over ranks q: sum_q (10 q + r + 0.1 i) = 10 n(n-1)/2 + n r + 0.1 n i.
    for (int i = 0; i < 2; ++i)
      CHECK(scattered[static_cast<std::size_t>(r)][static_cast<std::size_t>(i)] ==
            doctest::Approx(5.0 * n * (n - 1) + n * r + 0.1 * n * i).epsilon(1e-6));
  }
}

}  // namespace

TEST_CASE("all-gather and reduce-scatter of floats: blocks in rank order, summed") {
  auto threads = hw::make_thread_group(3);
  check_group(threads);
  auto model = test::make_rendezvous_group(3, test::SendMode::Deferred, std::chrono::seconds(20));
  check_group(model);
}

TEST_CASE("all-gather and reduce-scatter refuse buffers that are not whole blocks") {
  auto group = hw::make_thread_group(1);
  std::vector<float> mine(2), all(3);
  CHECK_THROWS_WITH_AS(group[0]->all_gather(mine, all),
                       "all_gather: 3 elements are not 1 blocks of 2", hw::HwError);
  CHECK_THROWS_WITH_AS(group[0]->reduce_scatter_sum(all, mine),
                       "reduce_scatter_sum: 3 elements are not 1 blocks of 2", hw::HwError);
}
