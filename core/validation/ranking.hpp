// Does the model order plans the way measurements do? For each `group` of
// published runs (one model on one cluster, several plans): Spearman's rank
// correlation of predicted and measured throughput, and the throughput lost
// by running the plan the model ranks first instead of the measured best.
#pragma once

#include <string>
#include <vector>

#include "core/validation/published_run.hpp"

namespace parashift::core {

struct PlanGroupRanking {
  std::string group;
  int plans = 0;
  double spearman = 0;       // in [-1, 1]; 1: the same order
  double pick_loss_pct = 0;  // 100 x (1 - measured(picked) / measured(best))
  std::string picked_row;    // the model's first choice
  std::string best_row;      // the measured best
};

/// Spearman's rho with average ranks for ties; 0 when either side is constant.
double spearman_rho(const std::vector<double>& a, const std::vector<double>& b);

/// One entry per group of at least two runs (runs with an empty group are
/// not ranked), in first-seen order; `predicted_s[i]` is runs[i]'s predicted
/// iteration time. Throughput is tokens per second per GPU.
std::vector<PlanGroupRanking> rank_plan_groups(const std::vector<PublishedRun>& runs,
                                               const std::vector<double>& predicted_s);

/// Groups with a single run, as "file:line (ROW): group 'G' has one row; ...":
/// a ranking needs at least two plans.
std::vector<std::string> single_row_groups(const std::vector<PublishedRun>& runs);

}  // namespace parashift::core
