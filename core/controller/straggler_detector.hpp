// Names the slow GPU, node or link, and how much slower.
//
// GPUs: a rank's smoothed per-layer time over the median of all ranks. It is
// flagged once the ratio is >= threshold for `patience` consecutive
// iterations and cleared once it is below (1 + threshold) / 2 for as many
// (hysteresis). With the default window 5 and patience 3 a slowdown is named
// 5 iterations after it starts (3 for the median to move, 3 to confirm, the
// first shared); normal jitter of +-3% stays far below 1.15.
// Nodes: when every rank of a node is flagged, one node finding replaces
// its GPU findings (slowdown: the least of theirs).
// Links: a link's smoothed delivered rate (bytes / busy time) against the
// best it has delivered in this run, with the same threshold and hysteresis.
#pragma once

#include <cstdint>
#include <vector>

#include "core/controller/policy_module.hpp"

namespace parashift::core {

class StragglerDetector : public PolicyModule {
 public:
  StragglerDetector(double threshold, int patience);
  void run(PolicyContext& context) override;

 private:
  struct Track {
    int over = 0;   // consecutive iterations at or above the threshold
    int under = 0;  // consecutive iterations below the clear level, while flagged
    bool flagged = false;
    double ratio = 1;
    std::int64_t since = 0;
  };
  // Advances a track by one ratio; true when its flag changed.
  bool update(Track& track, double ratio, std::int64_t iteration) const;
  std::vector<StragglerFinding> findings(const PolicyContext& context) const;

  double threshold_;
  double clear_;
  int patience_;
  std::vector<Track> ranks_;
  std::vector<Track> links_;
  std::vector<double> best_link_Bps_;
};

}  // namespace parashift::core
