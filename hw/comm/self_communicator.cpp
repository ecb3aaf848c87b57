#include "hw/comm/self_communicator.hpp"

#include <cstring>
#include <string>

#include "hw/hw_error.hpp"

namespace parashift::hw {

namespace {

void check_peer(int peer) {
  if (peer != 0)
    throw HwError("SelfCommunicator: peer " + std::to_string(peer) + " outside a group of 1");
}

}  // namespace

std::vector<double> SelfCommunicator::all_gather(std::span<const double> mine) {
  return {mine.begin(), mine.end()};
}

// One rank: the gather and the sum are the rank's own block (host memory).
void SelfCommunicator::all_gather(std::span<const float> mine, std::span<float> all) {
  check_block(mine.size(), all.size(), 1, "all_gather");
  std::memmove(all.data(), mine.data(), mine.size_bytes());
}

void SelfCommunicator::reduce_scatter_sum(std::span<const float> all, std::span<float> mine) {
  check_block(mine.size(), all.size(), 1, "reduce_scatter_sum");
  std::memmove(mine.data(), all.data(), mine.size_bytes());
}

void SelfCommunicator::send(std::span<const float> data, int peer, int tag) {
  send_bytes(std::as_bytes(data), peer, tag);
}

void SelfCommunicator::recv(std::span<float> data, int peer, int tag) {
  const auto bytes = take(peer, tag);
  if (bytes.size() != data.size_bytes())
    throw HwError("SelfCommunicator: message of " + std::to_string(bytes.size()) +
                  " bytes for a buffer of " + std::to_string(data.size_bytes()));
  std::memcpy(data.data(), bytes.data(), bytes.size());
}

void SelfCommunicator::send_bytes(std::span<const std::byte> data, int peer, int tag) {
  check_peer(peer);
  queued_[tag].emplace_back(data.begin(), data.end());
}

std::vector<std::byte> SelfCommunicator::recv_bytes(int peer, int tag) {
  return take(peer, tag);
}

std::vector<std::byte> SelfCommunicator::take(int peer, int tag) {
  check_peer(peer);
  auto it = queued_.find(tag);
  if (it == queued_.end() || it->second.empty())
    throw HwError("SelfCommunicator: recv with tag " + std::to_string(tag) +
                  " before any send: it would wait forever");
  auto bytes = std::move(it->second.front());
  it->second.pop_front();
  return bytes;
}

std::unique_ptr<Communicator> SelfCommunicator::split(int, int) {
  return std::make_unique<SelfCommunicator>();
}

}  // namespace parashift::hw
