// Leave-one-source-group-out cross-validation of the cost model: the
// efficiency shares are fitted without each source group in turn, and that
// group is predicted with them. The mean error over the held-out
// predictions is the accuracy figure the project states.
#pragma once

#include <string>
#include <vector>

#include "core/validation/efficiency_fit.hpp"

namespace parashift::core {

struct HeldOutGroup {
  std::string source_group;
  int rows = 0;
  double mape_pct = 0;  // of this group, predicted with the shares fitted without it
  EfficiencySet fitted;
};

struct CrossValidation {
  std::vector<double> predicted_s;  // per input run, from the fold that held its group out
  std::vector<double> error_pct;
  std::vector<HeldOutGroup> groups;  // in first-seen order
  double mape_pct() const;
};

CrossValidation leave_one_group_out(const std::vector<PublishedRun>& runs);

}  // namespace parashift::core
