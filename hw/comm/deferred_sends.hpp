// The order in which a communicator with rendezvous point-to-point (NCCL:
// a send blocks until its receiver posts, and one communicator's operations
// run one after another) lets deferred sends go: queued sends travel in one
// group with the next receive, or at a flush. A header receive (the length
// that starts a send_bytes message) takes, per peer in queue order, only
// the sends up to that peer's next payload, so lengths are exchanged before
// any payload has to move; a payload receive or a flush takes them all.
// Host logic only: the NCCL communicator (hw/cuda) uses it, and the tests
// run it against a rendezvous model of NCCL on threads
// (tests/hw/rendezvous_communicator.hpp).
#pragma once

#include <cstddef>
#include <vector>

namespace parashift::hw {

class DeferredSends {
 public:
  /// Queues a send to `peer`; returns its id (0, 1, 2, ... in queue order).
  std::size_t queue(int peer, bool header);
  /// The ids to issue now, in queue order, marked issued: all not yet
  /// issued, or with `headers_only` per peer only those before its first
  /// queued payload.
  std::vector<std::size_t> take(bool headers_only);
  /// Forgets the issued sends (their group has completed).
  void forget_issued();
  bool empty() const { return sends_.empty(); }

 private:
  struct Send {
    std::size_t id = 0;
    int peer = 0;
    bool header = false;
    bool issued = false;
  };
  std::vector<Send> sends_;
  std::size_t next_id_ = 0;
};

}  // namespace parashift::hw
