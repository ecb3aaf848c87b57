// What a compressor needs from the ranks it averages over: a sum, an
// all-gather and an all-to-all of float buffers. The executor adapts its
// communicators to it (hw/exec/compressed_sync.cpp); payloads that are not
// floats (indices, int8 codes) travel bit for bit inside float slots, so
// every call must move bytes unchanged apart from the sum.
#pragma once

#include <span>

namespace parashift::core {

class ReduceGroup {
 public:
  virtual ~ReduceGroup() = default;
  virtual int ranks() const = 0;
  virtual int rank() const = 0;
  /// Element-wise sum over the group, in place.
  virtual void sum(std::span<float> data) = 0;
  /// Every rank's `mine` (all the same length) into `all`, in rank order.
  virtual void all_gather(std::span<const float> mine, std::span<float> all) = 0;
  /// Block j of `send` (send.size() / ranks() floats) goes to rank j; block
  /// i of `recv` (the same size) comes from rank i.
  virtual void all_to_all(std::span<const float> send, std::span<float> recv) = 0;
};

}  // namespace parashift::core
