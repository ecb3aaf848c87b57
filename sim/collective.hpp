// Collectives lowered onto the path model with NCCL's ring algorithm: a
// group of n ranks moves `bytes` per rank in steps of bytes/n between ring
// neighbours; every step waits for the slowest neighbour pair.
//   all-reduce: 2(n-1) steps; reduce-scatter, all-gather: n-1 steps;
//   all-to-all: n-1 steps of bytes/n, each to a different peer;
//   send/recv: one step in which every rank sends all `bytes` to its neighbour.
// Bus bandwidth (nccl-tests): algbw * 2(n-1)/n for all-reduce, (n-1)/n for
// reduce-scatter and all-gather, so simulated and measured figures compare.
#pragma once

#include <vector>

#include "core/cost/work_profile.hpp"
#include "sim/path_model.hpp"

namespace parashift::sim {

/// Duration of one collective over `gpus` (in ring order).
TimeNs ring_collective_ns(const PathModel& paths, core::CollectiveKind kind, double bytes,
                          const std::vector<int>& gpus);

/// nccl-tests' bus-bandwidth factor for `kind` over n ranks.
double bus_factor(core::CollectiveKind kind, int ranks);

}  // namespace parashift::sim
