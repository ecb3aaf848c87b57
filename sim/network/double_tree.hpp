// NCCL's double binary tree (ncclGetBtree / ncclGetDtree in NCCL's
// src/graph/trees.cc) over ranks 0..n-1. Tree 0: rank r != 0 with lowest set
// bit b hangs under (r ^ b) | (b << 1), or under r ^ b when that is >= n;
// rank 0 is the root. Tree 1 is tree 0 mirrored (r -> n-1-r) when n is even
// and shifted by one (r -> r+1 mod n) when n is odd, so most ranks that are
// interior in one tree are leaves in the other and every rank sends and
// receives about the same in total.
#pragma once

#include <array>
#include <vector>

namespace parashift::sim {

struct RankTree {
  std::vector<int> parent;  // by rank; -1 at the root
  std::vector<int> depth;   // root 0
  int height = 0;           // max depth
};

/// Tree 0 of NCCL's double binary tree over `ranks` ranks (>= 1).
RankTree nccl_binary_tree(int ranks);
/// Both trees.
std::array<RankTree, 2> nccl_double_binary_tree(int ranks);

}  // namespace parashift::sim
