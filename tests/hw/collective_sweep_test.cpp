// The measured collective sweep (hw/calib/collective_sweep.hpp) on a thread
// group: sizes as nccl-tests rounds them, every rank the same points, the
// results checked element by element. Times are the machine's: not checked.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "hw/calib/collective_sweep.hpp"
#include "hw/comm/thread_communicator.hpp"
#include "hw/device/host_kernels.hpp"

using namespace parashift;

namespace {

// Forwards everything, but adds 1 to the first element of every float
// all-reduce result on rank 0: a communicator that gets one value wrong.
class OffByOne : public hw::Communicator {
 public:
  explicit OffByOne(hw::Communicator& inner) : inner_(inner) {}
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  void all_reduce_sum(std::span<float> data) override {
    inner_.all_reduce_sum(data);
    if (rank() == 0 && !data.empty()) data[0] += 1;
  }
  void all_reduce_sum(std::span<double> data) override { inner_.all_reduce_sum(data); }
  void all_reduce_max(std::span<double> data) override { inner_.all_reduce_max(data); }
  std::vector<double> all_gather(std::span<const double> mine) override {
    return inner_.all_gather(mine);
  }
  void all_gather(std::span<const float> mine, std::span<float> all) override {
    inner_.all_gather(mine, all);
  }
  void reduce_scatter_sum(std::span<const float> all, std::span<float> mine) override {
    inner_.reduce_scatter_sum(all, mine);
  }
  void barrier() override { inner_.barrier(); }
  void send(std::span<const float> data, int peer, int tag) override {
    inner_.send(data, peer, tag);
  }
  void recv(std::span<float> data, int peer, int tag) override { inner_.recv(data, peer, tag); }
  void send_bytes(std::span<const std::byte> data, int peer, int tag) override {
    inner_.send_bytes(data, peer, tag);
  }
  std::vector<std::byte> recv_bytes(int peer, int tag) override {
    return inner_.recv_bytes(peer, tag);
  }
  void flush_sends() override { inner_.flush_sends(); }
  std::unique_ptr<hw::Communicator> split(int color, int key) override {
    return inner_.split(color, key);
  }

 private:
  hw::Communicator& inner_;
};

// Each of `n` threads runs the sweep; rank r's points.
std::vector<std::vector<hw::SweepPoint>> sweep(int n, core::CollectiveKind kind,
                                               const std::vector<double>& sizes,
                                               bool off_by_one = false) {
  auto group = hw::make_thread_group(n);
  std::vector<std::vector<hw::SweepPoint>> points(static_cast<std::size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      hw::HostKernels kernels;
      hw::Communicator& world = *group[static_cast<std::size_t>(r)];
      OffByOne wrong(world);
      points[static_cast<std::size_t>(r)] = hw::measure_collective(
          off_by_one ? static_cast<hw::Communicator&>(wrong) : world, kernels, kind, sizes, 1, 2);
    });
  for (auto& t : threads) t.join();
  return points;
}

}  // namespace

TEST_CASE("the measured sweep: nccl-tests' sizes, exact results, the same points on every rank") {
  // 3 ranks. all_reduce keeps whole floats: 1000 B is 250 floats, 1000 B.
  // all_gather and reduce_scatter round the count down to a multiple of 3:
  // 250 -> 249 floats, 996 B; 4096 B: 1024 -> 1023 floats, 4092 B.
  const std::vector<double> sizes{1000, 4096};
  const auto reduce = sweep(3, core::CollectiveKind::AllReduce, sizes);
  const auto gather = sweep(3, core::CollectiveKind::AllGather, sizes);
  const auto scatter = sweep(3, core::CollectiveKind::ReduceScatter, sizes);
  for (const auto* points : {&reduce, &gather, &scatter}) {
    REQUIRE((*points)[0].size() == 2);
    for (int r = 1; r < 3; ++r)
      for (std::size_t i = 0; i < 2; ++i) {
        CHECK((*points)[static_cast<std::size_t>(r)][i].seconds == (*points)[0][i].seconds);
        CHECK((*points)[static_cast<std::size_t>(r)][i].wrong == 0);
      }
    CHECK((*points)[0][0].wrong == 0);
    CHECK((*points)[0][0].seconds > 0);
  }
  CHECK(reduce[0][0].bytes == 1000);
  CHECK(reduce[0][1].bytes == 4096);
  CHECK(gather[0][0].bytes == 996);
  CHECK(scatter[0][1].bytes == 4092);
}

TEST_CASE("the measured sweep counts a wrong element, summed over the ranks") {
  // Rank 0's first element of each all-reduce is one too large: one wrong
  // element per size, reported by every rank.
  const auto points = sweep(2, core::CollectiveKind::AllReduce, {64, 256}, true);
  for (const auto& rank : points) {
    REQUIRE(rank.size() == 2);
    CHECK(rank[0].wrong == 1);
    CHECK(rank[1].wrong == 1);
  }
}

TEST_CASE("the measured sweep runs the collectives its communicator has") {
  CHECK(std::string(hw::sweep_unsupported(core::CollectiveKind::AllReduce)).empty());
  CHECK(std::string(hw::sweep_unsupported(core::CollectiveKind::AllToAll)).find("all-to-all") !=
        std::string::npos);
  CHECK_FALSE(std::string(hw::sweep_unsupported(core::CollectiveKind::SendRecv)).empty());
}
