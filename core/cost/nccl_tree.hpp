// NCCL's double binary tree (ncclGetBtree / ncclGetDtree in NCCL's
// src/graph/trees.cc) over ranks 0..n-1. Tree 0: rank r != 0 with lowest set
// bit b hangs under (r ^ b) | (b << 1), or under r ^ b when that is >= n;
// rank 0 is the root. Tree 1 is tree 0 mirrored (r -> n-1-r) when n is even
// and shifted by one (r -> r+1 mod n) when n is odd, so most ranks that are
// interior in one tree are leaves in the other and every rank sends and
// receives about the same in total.
//
// Between nodes NCCL's tree all-reduce runs these trees over the nodes, one
// pair of trees per channel (nccl_tree_flows): the simulator sends its flows
// along them (sim/network/tree_coflow.hpp) and the `aggregation` module
// prices the same edges, so a new ring order moves the trees' roots and
// interior nodes as NCCL does when the communicator's rank order changes.
#pragma once

#include <array>
#include <functional>
#include <utility>
#include <vector>

namespace parashift::core {

struct RankTree {
  std::vector<int> parent;  // by rank; -1 at the root
  std::vector<int> depth;   // root 0
  int height = 0;           // max depth
};

/// Tree 0 of NCCL's double binary tree over `ranks` ranks (>= 1).
RankTree nccl_binary_tree(int ranks);
/// Both trees.
std::array<RankTree, 2> nccl_double_binary_tree(int ranks);

/// The flows of NCCL's tree all-reduce between the nodes of a group whose
/// members (ids of GPUs or of ranks) are `ring`, in ring order. The nodes
/// are the hosts in the order the ring reaches them; channel j joins the
/// j-th member of every host (core::scope_rings' InterNode rings: one rail
/// each) and carries 1/channels of the data, half on each of its two trees.
/// Every tree edge carries that half both ways (reduce up, broadcast down),
/// so each pair (from, to) here sends bytes / (2 channels).
struct TreeFlows {
  int channels = 0;  // 0: the group is on one host
  std::vector<std::pair<int, int>> pairs;
};
TreeFlows nccl_tree_flows(const std::vector<int>& ring, const std::function<int(int)>& host_of);

}  // namespace parashift::core
