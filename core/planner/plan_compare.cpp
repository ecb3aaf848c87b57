#include "core/planner/plan_compare.hpp"

#include <algorithm>
#include <cmath>

namespace parashift::core {

std::vector<TermDifference> compare_terms(const IterationEstimate& a, const IterationEstimate& b) {
  auto term = [](const char* name, TimeNs x_ns, TimeNs y_ns) {
    return TermDifference{name, ns_to_s(x_ns), ns_to_s(y_ns)};
  };
  std::vector<TermDifference> out{
      term("compute", a.forward_ns + a.backward_ns, b.forward_ns + b.backward_ns),
      term("recompute", a.recompute_ns, b.recompute_ns),
      term("tp+cp comm", a.tp_comm_ns + a.cp_comm_ns, b.tp_comm_ns + b.cp_comm_ns),
      term("pp bubble+comm", a.bubble_ns + a.pp_comm_ns, b.bubble_ns + b.pp_comm_ns),
      term("dp exposed", a.dp_comm_exposed_ns, b.dp_comm_exposed_ns),
      term("optimizer", a.optimizer_ns, b.optimizer_ns),
  };
  std::stable_sort(out.begin(), out.end(), [](const TermDifference& x, const TermDifference& y) {
    return std::abs(x.delta_s()) > std::abs(y.delta_s());
  });
  return out;
}

}  // namespace parashift::core
