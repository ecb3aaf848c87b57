#include "core/snapshot/interval.hpp"

#include <cassert>
#include <cmath>

namespace parashift::core {

double young_interval_s(double cost_s, double mtbf_s) {
  assert(cost_s >= 0 && mtbf_s > 0);
  return std::sqrt(2.0 * cost_s * mtbf_s);
}

double daly_interval_s(double cost_s, double mtbf_s) {
  assert(cost_s >= 0 && mtbf_s > 0);
  if (cost_s >= 2.0 * mtbf_s) return mtbf_s;
  const double x = cost_s / (2.0 * mtbf_s);
  return std::sqrt(2.0 * cost_s * mtbf_s) * (1.0 + std::sqrt(x) / 3.0 + x / 9.0) - cost_s;
}

}  // namespace parashift::core
