#include "tools/cli/elastic_shrink.hpp"

#include <algorithm>
#include <sstream>

#include "core/input_error.hpp"

namespace parashift::tools {

std::vector<int> parse_node_ids(const std::string& text, int ranks, int ranks_per_node) {
  const int expected = ranks_per_node > 0 ? ranks / ranks_per_node : 1;
  const std::string what = "--node-ids: expected " + std::to_string(expected) +
                           " distinct comma-separated node numbers >= 0 (one per " +
                           std::to_string(ranks_per_node > 0 ? ranks_per_node : ranks) +
                           " ranks), found '" + text + "'";
  std::vector<int> nodes;
  std::istringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (item.empty() || item.size() > 9 ||
        !std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; }))
      throw core::InputError(what);
    nodes.push_back(std::stoi(item));
  }
  std::vector<int> sorted = nodes;
  std::sort(sorted.begin(), sorted.end());
  if (static_cast<int>(nodes.size()) != expected || text.ends_with(",") ||
      std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    throw core::InputError(what);
  return nodes;
}

std::string node_ids_text(const std::vector<int>& nodes) {
  std::string out;
  for (int n : nodes) out += (out.empty() ? "" : ",") + std::to_string(n);
  return out;
}

core::ParallelPlan shrink_to_fit(const core::ParallelPlan& plan, int ranks, int ranks_per_node) {
  core::ParallelPlan out = plan;
  const int replica = plan.tp * plan.pp * plan.cp;
  const int per_node = std::max(ranks_per_node, 1);
  int dp = std::min(plan.dp, ranks / replica);
  while (dp > 0 && (dp * replica) % per_node != 0) --dp;
  out.dp = dp;
  out.global_batch = dp > 0 ? plan.global_batch / plan.dp * dp : 0;
  return out;
}

}  // namespace parashift::tools
