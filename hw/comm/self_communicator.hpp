// A group of one rank, for single-process runs and tests: collectives are the
// identity; a send to rank 0 is queued until the matching recv.
#pragma once

#include <deque>
#include <map>
#include <vector>

#include "hw/comm/communicator.hpp"

namespace parashift::hw {

class SelfCommunicator : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void all_reduce_sum(std::span<float>) override {}
  void all_reduce_sum(std::span<double>) override {}
  void all_reduce_max(std::span<double>) override {}
  std::vector<double> all_gather(std::span<const double> mine) override;
  void all_gather(std::span<const float> mine, std::span<float> all) override;
  void reduce_scatter_sum(std::span<const float> all, std::span<float> mine) override;
  void barrier() override {}
  void send(std::span<const float> data, int peer, int tag) override;
  void recv(std::span<float> data, int peer, int tag) override;
  void send_bytes(std::span<const std::byte> data, int peer, int tag) override;
  std::vector<std::byte> recv_bytes(int peer, int tag) override;
  void flush_sends() override {}
  std::unique_ptr<Communicator> split(int color, int key) override;

 private:
  std::vector<std::byte> take(int peer, int tag);
  std::map<int, std::deque<std::vector<std::byte>>> queued_;  // by tag
};

}  // namespace parashift::hw
