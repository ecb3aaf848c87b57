// Which GPU each rank of a contract harness runs on, and which GPUs have
// failed: rank r starts on GPU r, the case's spares follow, every GPU on a
// host of its own in one rack. The fake backend and the executor's threaded
// harness place ranks alike.
#pragma once

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/backend.hpp"

namespace parashift::test {

class GpuPlacement {
 public:
  GpuPlacement(int ranks, int spare_gpus) : dead_(static_cast<std::size_t>(ranks + spare_gpus)) {
    for (int r = 0; r < ranks; ++r) gpu_of_rank_.push_back(r);
  }
  const std::vector<int>& gpu_of_rank() const { return gpu_of_rank_; }
  int gpu_of_rank(int rank) const { return gpu_of_rank_.at(static_cast<std::size_t>(rank)); }
  /// Capabilities' placement: each rank's GPU, the free live GPUs, every GPU's place.
  void describe(core::Capabilities& caps) const {
    caps.gpu_of_rank = gpu_of_rank_;
    for (int g = 0; g < static_cast<int>(dead_.size()); ++g) {
      if (!busy(g) && !dead_[static_cast<std::size_t>(g)]) caps.spare_gpus.push_back(g);
      caps.place_of_gpu.push_back({g, 0});
    }
  }
  void fail(int gpu) { dead_.at(static_cast<std::size_t>(gpu)) = true; }
  /// RemapDirective: `rank` onto `gpu`, which must be a live free one.
  void remap(int rank, int gpu, const std::string& who) {
    if (gpu < 0 || gpu >= static_cast<int>(dead_.size()) || busy(gpu) ||
        dead_[static_cast<std::size_t>(gpu)])
      throw std::invalid_argument(who + ": gpu " + std::to_string(gpu) + " is no spare");
    gpu_of_rank_.at(static_cast<std::size_t>(rank)) = gpu;
  }
  /// A re-plan onto `ranks` ranks: placed afresh on the live GPUs, in order.
  void place_afresh(int ranks, const std::string& plan, const std::string& who) {
    gpu_of_rank_.clear();
    for (int g = 0; g < static_cast<int>(dead_.size()); ++g)
      if (!dead_[static_cast<std::size_t>(g)]) gpu_of_rank_.push_back(g);
    if (static_cast<int>(gpu_of_rank_.size()) < ranks)
      throw std::invalid_argument(who + ": too few GPUs left for " + plan);
    gpu_of_rank_.resize(static_cast<std::size_t>(ranks));
  }

 private:
  bool busy(int gpu) const {
    return std::find(gpu_of_rank_.begin(), gpu_of_rank_.end(), gpu) != gpu_of_rank_.end();
  }
  std::vector<int> gpu_of_rank_;
  std::vector<bool> dead_;
};

}  // namespace parashift::test
