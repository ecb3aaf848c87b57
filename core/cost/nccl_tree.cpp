#include "core/cost/nccl_tree.hpp"

#include <algorithm>

#include "core/assert.hpp"
#include "core/cost/grad_sync.hpp"

namespace parashift::core {
namespace {

int btree_parent(int rank, int ranks) {
  if (rank == 0) return -1;
  int bit = 1;
  while ((rank & bit) == 0) bit <<= 1;
  const int up = (rank ^ bit) | (bit << 1);
  return up < ranks ? up : rank ^ bit;
}

void fill_depths(RankTree& tree) {
  const int n = static_cast<int>(tree.parent.size());
  tree.depth.assign(static_cast<std::size_t>(n), -1);
  tree.height = 0;
  for (int r = 0; r < n; ++r) {
    int d = 0;
    for (int p = r; tree.parent[p] != -1; p = tree.parent[p]) ++d;
    tree.depth[r] = d;
    tree.height = std::max(tree.height, d);
  }
}

}  // namespace

RankTree nccl_binary_tree(int ranks) {
  PARASHIFT_ASSERT(ranks >= 1);
  RankTree tree;
  tree.parent.resize(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) tree.parent[r] = btree_parent(r, ranks);
  fill_depths(tree);
  return tree;
}

std::array<RankTree, 2> nccl_double_binary_tree(int ranks) {
  PARASHIFT_ASSERT(ranks >= 1);
  std::array<RankTree, 2> trees{nccl_binary_tree(ranks), RankTree{}};
  RankTree& second = trees[1];
  second.parent.resize(static_cast<std::size_t>(ranks));
  const bool mirror = ranks % 2 == 0;
  // `to` maps a rank to its place in tree 0's numbering; `from` maps back.
  const auto to = [&](int r) { return mirror ? ranks - 1 - r : (r - 1 + ranks) % ranks; };
  const auto from = [&](int r) { return mirror ? ranks - 1 - r : (r + 1) % ranks; };
  for (int r = 0; r < ranks; ++r) {
    const int up = trees[0].parent[to(r)];
    second.parent[r] = up == -1 ? -1 : from(up);
  }
  fill_depths(second);
  return trees;
}

TreeFlows nccl_tree_flows(const std::vector<int>& ring, const std::function<int(int)>& host_of) {
  TreeFlows out;
  for (const std::vector<int>& nodes : scope_rings(ring, SyncScope::InterNode, host_of)) {
    const int n = static_cast<int>(nodes.size());
    if (n < 2) continue;
    ++out.channels;
    for (const RankTree& tree : nccl_double_binary_tree(n))
      for (int r = 0; r < n; ++r) {
        const int up = tree.parent[static_cast<std::size_t>(r)];
        if (up < 0) continue;
        out.pairs.emplace_back(nodes[static_cast<std::size_t>(r)],
                               nodes[static_cast<std::size_t>(up)]);
        out.pairs.emplace_back(nodes[static_cast<std::size_t>(up)],
                               nodes[static_cast<std::size_t>(r)]);
      }
  }
  return out;
}

}  // namespace parashift::core
