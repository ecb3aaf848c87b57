// An in-process group: N ranks as N threads of one process, for tests that
// run a multi-rank HwBackend without MPI (the controller contract). Every
// collective is an all-gather of each rank's bytes, reduced by each rank in
// rank order (so all ranks get the same bits); sends are delivered at once
// into the receiver's mailbox keyed by (sender, tag).
#pragma once

#include <memory>
#include <vector>

#include "hw/comm/communicator.hpp"

namespace parashift::hw {

/// `size` communicators of one group; hand communicator r to the thread of rank r.
std::vector<std::unique_ptr<Communicator>> make_thread_group(int size);

}  // namespace parashift::hw
