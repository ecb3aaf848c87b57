#include "core/work_split.hpp"

#include <numeric>

#include "core/input_error.hpp"

namespace parashift::core {

std::vector<int> even_split(int total, int parts) {
  std::vector<int> out(static_cast<std::size_t>(parts), total / parts);
  for (int i = 0; i < total % parts; ++i) ++out[static_cast<std::size_t>(i)];
  return out;
}

int layers_on_stage(const std::vector<int>& layers_per_virtual_stage, int pp, int stage) {
  int n = 0;
  for (std::size_t g = static_cast<std::size_t>(stage); g < layers_per_virtual_stage.size();
       g += static_cast<std::size_t>(pp))
    n += layers_per_virtual_stage[g];
  return n;
}

std::vector<int> offsets_of(const std::vector<int>& counts) {
  std::vector<int> out(counts.size() + 1, 0);
  std::partial_sum(counts.begin(), counts.end(), out.begin() + 1);
  return out;
}

void check_split(const std::vector<int>& counts, int parts, int total, int min_each,
                 const std::string& what) {
  bool ok = static_cast<int>(counts.size()) == parts;
  for (int c : counts) ok = ok && c >= min_each;
  ok = ok && std::accumulate(counts.begin(), counts.end(), 0) == total;
  if (ok) return;
  std::string found;
  for (int c : counts) found += (found.empty() ? "" : ",") + std::to_string(c);
  throw InputError(what + ": expected " + std::to_string(parts) +
                   " entries >= " + std::to_string(min_each) + " summing to " +
                   std::to_string(total) + ", found [" + found + "]");
}

}  // namespace parashift::core
