// Where each parallel coordinate lives among global ranks (rank r runs on
// GPU r), tp fastest, then cp, then dp and pp in the plan's order
// (ParallelPlan::order):
//   tp-cp-dp-pp (Megatron's default):
//     rank = tp_rank + tp * (cp_rank + cp * (dp_rank + dp * pp_rank))
//   tp-cp-pp-dp (Megatron's --use-tp-pp-dp-mapping, Llama 3's order):
//     rank = tp_rank + tp * (cp_rank + cp * (pp_rank + pp * dp_rank))
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
      : tp_(plan.tp), cp_(plan.cp), dp_(plan.dp), pp_(plan.pp) {
    const int inner = tp_ * cp_;
    const bool pp_outer = plan.order == RankOrder::TpCpDpPp;
    dp_stride_ = pp_outer ? inner : inner * pp_;
    pp_stride_ = pp_outer ? inner * dp_ : inner;
  }

  int rank(const RankCoord& c) const {
    return c.tp + tp_ * c.cp + dp_stride_ * c.dp + pp_stride_ * c.pp;
  }
  RankCoord coord(int rank) const {
    RankCoord c;
    c.tp = rank % tp_;
    c.cp = rank / tp_ % cp_;
    c.dp = rank / dp_stride_ % dp_;
    c.pp = rank / pp_stride_ % pp_;
    return c;
  }
  int ranks() const { return tp_ * cp_ * dp_ * pp_; }
  /// Rank distance between neighbours of a data-parallel / pipeline group.
  int dp_stride() const { return dp_stride_; }
  int pp_stride() const { return pp_stride_; }

 private:
  int tp_, cp_, dp_, pp_;
  int dp_stride_ = 1, pp_stride_ = 1;
};

}  // namespace parashift::core
