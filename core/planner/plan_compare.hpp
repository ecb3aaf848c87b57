// Why one plan beats another: the iteration-time terms side by side.
#pragma once

#include <string>
#include <vector>

#include "core/cost/estimate.hpp"

namespace parashift::core {

/// One term of IterationEstimate::total_ns for two plans, in seconds.
struct TermDifference {
  std::string term;  // "compute", "recompute", "tp+cp comm", "pp bubble+comm", ...
  double first_s = 0;
  double second_s = 0;
  double delta_s() const { return second_s - first_s; }
};

/// The terms that sum to total_ns, grouped as compute (forward + backward),
/// recompute, tp+cp comm, pp bubble+comm, dp exposed, optimizer; sorted by
/// |delta| (largest first, ties in the order above).
std::vector<TermDifference> compare_terms(const IterationEstimate& first,
                                          const IterationEstimate& second);

}  // namespace parashift::core
