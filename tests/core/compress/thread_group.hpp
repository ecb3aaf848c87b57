// An in-process ReduceGroup: W threads exchange buffers through shared
// slots, two barriers per call (publish, then read before anyone reuses
// them). Sums run in rank order, so every rank gets the same bits.
#pragma once

#include <barrier>
#include <functional>
#include <thread>
#include <vector>

#include "core/compress/reduce_group.hpp"

namespace parashift::test {

struct ThreadGroupShared {
  explicit ThreadGroupShared(int ranks) : slots(ranks), sync(ranks) {}
  std::vector<std::vector<float>> slots;
  std::barrier<> sync;
};

class ThreadGroup : public core::ReduceGroup {
 public:
  ThreadGroup(ThreadGroupShared& shared, int rank) : shared_(shared), rank_(rank) {}
  int ranks() const override { return static_cast<int>(shared_.slots.size()); }
  int rank() const override { return rank_; }
  double calls = 0;

  void sum(std::span<float> data) override {
    publish(data);
    for (std::size_t i = 0; i < data.size(); ++i) {
      float s = 0.0f;
      for (const auto& slot : shared_.slots) s += slot[i];
      data[i] = s;
    }
    shared_.sync.arrive_and_wait();
  }
  void all_gather(std::span<const float> mine, std::span<float> all) override {
    publish(mine);
    std::size_t at = 0;
    for (const auto& slot : shared_.slots)
      for (float v : slot) all[at++] = v;
    shared_.sync.arrive_and_wait();
  }
  void all_to_all(std::span<const float> send, std::span<float> recv) override {
    publish(send);
    const std::size_t block = send.size() / shared_.slots.size();
    for (std::size_t r = 0; r < shared_.slots.size(); ++r)
      for (std::size_t i = 0; i < block; ++i)
        recv[r * block + i] = shared_.slots[r][static_cast<std::size_t>(rank_) * block + i];
    shared_.sync.arrive_and_wait();
  }

 private:
  void publish(std::span<const float> data) {
    ++calls;
    shared_.slots[static_cast<std::size_t>(rank_)].assign(data.begin(), data.end());
    shared_.sync.arrive_and_wait();
  }
  ThreadGroupShared& shared_;
  int rank_;
};

/// Runs body(rank, group) on `ranks` threads.
inline void run_group(int ranks, const std::function<void(int, ThreadGroup&)>& body) {
  ThreadGroupShared shared(ranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      ThreadGroup group(shared, r);
      body(r, group);
    });
  for (auto& t : threads) t.join();
}

}  // namespace parashift::test
