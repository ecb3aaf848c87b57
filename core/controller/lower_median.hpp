// The lower median of a set of values, in linear time: the element at
// (size - 1) / 2 once sorted (0 for none). Reorders `values`.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace parashift::core {

inline double lower_median(std::vector<double>& values) {
  if (values.empty()) return 0.0;
  const auto mid = values.begin() + static_cast<std::ptrdiff_t>((values.size() - 1) / 2);
  std::nth_element(values.begin(), mid, values.end());
  return *mid;
}

}  // namespace parashift::core
