// Where each parallel coordinate lives among global ranks. Megatron's default
// order tp-cp-dp-pp, tp fastest:
//   rank = tp_rank + tp * (cp_rank + cp * (dp_rank + dp * pp_rank))
// Nodes hold consecutive ranks, so small tensor-parallel groups stay on NVLink.
#pragma once

#include "core/parallel_plan.hpp"

namespace parashift::core {

struct RankCoord {
  int tp = 0;
  int cp = 0;
  int dp = 0;
  int pp = 0;
};

class RankLayout {
 public:
  explicit RankLayout(const ParallelPlan& plan)
      : tp_(plan.tp), cp_(plan.cp), dp_(plan.dp), pp_(plan.pp) {}

  int rank(const RankCoord& c) const { return c.tp + tp_ * (c.cp + cp_ * (c.dp + dp_ * c.pp)); }
  RankCoord coord(int rank) const {
    RankCoord c;
    c.tp = rank % tp_;
    rank /= tp_;
    c.cp = rank % cp_;
    rank /= cp_;
    c.dp = rank % dp_;
    c.pp = rank / dp_;
    return c;
  }
  int ranks() const { return tp_ * cp_ * dp_ * pp_; }

 private:
  int tp_, cp_, dp_, pp_;
};

}  // namespace parashift::core
