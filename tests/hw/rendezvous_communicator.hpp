// A model of NCCL's point-to-point semantics on threads, to test on a CPU
// what the NCCL communicator (hw/cuda/nccl_communicator.cpp) relies on:
// a send completes only when its receiver posts the matching receive (no
// buffering), sends and receives between two ranks match in order and must
// agree on their size, the operations of one group progress together, and
// one communicator runs its groups one after another (a rank's next group
// starts only when its previous ones have completed). Collectives and split
// go through a thread group (hw/comm/thread_communicator.hpp).
//
// Deferred mode queues sends and issues them with the next receive (or
// group of receives, recv_group) or flush
// in the order hw::DeferredSends gives, as the NCCL communicator does; eager
// mode issues each send as a group of its own, as it did before;
// deferred-all mode issues every queued send with any receive, headers and
// payloads alike (DeferredSends without its header rule). A rank that
// waits longer than `patience` for its groups fails the whole group with
// HwError("... deadlock ..."), so a deadlock ends the test instead of hanging it.
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "hw/comm/communicator.hpp"

namespace parashift::test {

enum class SendMode { Deferred, Eager, DeferredAll };

std::vector<std::unique_ptr<hw::Communicator>> make_rendezvous_group(
    int size, SendMode mode, std::chrono::milliseconds patience);

}  // namespace parashift::test
