// Which rank runs on which GPU slot, both ways, in a campaign's snapshot
// policy (snapshot_run.hpp). Private to sim/faults.
#pragma once

#include <cstddef>
#include <vector>

namespace parashift::sim::detail {

// Which rank runs on which GPU slot, both ways (-1: none).
struct Mapping {
  std::vector<int> rank_of_gpu;
  std::vector<int> gpu_of_rank;
  void set(int gpu, int rank) {
    const int old = rank_of_gpu[static_cast<std::size_t>(gpu)];
    if (old >= 0 && gpu_of_rank[static_cast<std::size_t>(old)] == gpu)
      gpu_of_rank[static_cast<std::size_t>(old)] = -1;
    rank_of_gpu[static_cast<std::size_t>(gpu)] = rank;
    if (rank >= 0) {
      if (static_cast<std::size_t>(rank) >= gpu_of_rank.size())
        gpu_of_rank.resize(static_cast<std::size_t>(rank) + 1, -1);
      gpu_of_rank[static_cast<std::size_t>(rank)] = gpu;
    }
  }
  int rank(int gpu) const { return rank_of_gpu[static_cast<std::size_t>(gpu)]; }
  int gpu(int rank) const {
    return static_cast<std::size_t>(rank) < gpu_of_rank.size()
               ? gpu_of_rank[static_cast<std::size_t>(rank)]
               : -1;
  }
};

}  // namespace parashift::sim::detail
