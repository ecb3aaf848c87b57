// The narrow interface the executor talks to its peers through: a group of
// ranks that can reduce, gather and exchange point-to-point messages. The CPU
// flavour implements it with MPI, tests with a one-rank SelfCommunicator; the
// CUDA flavour's NCCL communicator carries device buffers behind the same calls.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

namespace parashift::hw {

/// One message to receive: `data` is filled exactly by `peer`'s send with `tag`.
struct RecvRequest {
  std::span<float> data;
  int peer = 0;
  int tag = 0;
};

/// Throws HwError unless `all` holds `ranks` blocks of `block` elements.
void check_block(std::size_t block, std::size_t all, int ranks, const char* what);

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  /// Element-wise sum over the group, in place.
  virtual void all_reduce_sum(std::span<float> data) = 0;
  virtual void all_reduce_sum(std::span<double> data) = 0;
  virtual void all_reduce_max(std::span<double> data) = 0;
  /// Every rank's `mine` (all the same length), concatenated in rank order.
  virtual std::vector<double> all_gather(std::span<const double> mine) = 0;
  /// Every rank's `mine` (n floats each) into `all` (size() x n), in rank order.
  virtual void all_gather(std::span<const float> mine, std::span<float> all) = 0;
  /// The element-wise sum over the group of `all` (size() x n floats), of
  /// which this rank keeps block rank() in `mine` (n floats).
  virtual void reduce_scatter_sum(std::span<const float> all, std::span<float> mine) = 0;
  virtual void barrier() = 0;

  /// Queues `data` (copied) for `peer`; it is delivered by flush_sends() at the latest.
  virtual void send(std::span<const float> data, int peer, int tag) = 0;
  /// Blocks until the message with `tag` from `peer` has filled `data` exactly.
  virtual void recv(std::span<float> data, int peer, int tag) = 0;
  /// Blocks until every request is filled. Rendezvous transports (NCCL) post
  /// the receives together, with the queued sends, as a pipeline step needs
  /// when it takes a forward input and a backward gradient at once;
  /// buffered ones (MPI, threads) may take them one by one, the default.
  virtual void recv_group(std::span<const RecvRequest> requests) {
    for (const RecvRequest& r : requests) recv(r.data, r.peer, r.tag);
  }
  virtual void send_bytes(std::span<const std::byte> data, int peer, int tag) = 0;
  /// Receives a message of any length.
  virtual std::vector<std::byte> recv_bytes(int peer, int tag) = 0;
  /// Waits until every queued send has left.
  virtual void flush_sends() = 0;
  /// Starts the queued sends without waiting for them, when no receive is
  /// coming soon to carry them: rendezvous transports (NCCL) issue them as a
  /// group of their own, which their next operation waits behind; buffered
  /// ones (MPI, threads) have sent them already (the default).
  virtual void post_sends() {}

  /// Ranks with the same `color` form a new group, ordered by `key`.
  virtual std::unique_ptr<Communicator> split(int color, int key) = 0;
};

}  // namespace parashift::hw
