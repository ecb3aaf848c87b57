#include "hw/exec/compressed_sync.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "hw/hw_error.hpp"

namespace parashift::hw {

void CommReduceGroup::all_to_all(std::span<const float> send, std::span<float> recv) {
  const auto n = static_cast<std::size_t>(comm_.size());
  const std::size_t block = send.size() / n;
  const auto me = static_cast<std::size_t>(comm_.rank());
  constexpr int kTag = 0x5a2a;  // this group's own communicator: no other traffic shares it
  for (std::size_t p = 0; p < n; ++p)
    if (p != me) comm_.send(send.subspan(p * block, block), static_cast<int>(p), kTag);
  std::copy_n(send.begin() + static_cast<std::ptrdiff_t>(me * block), block,
              recv.begin() + static_cast<std::ptrdiff_t>(me * block));
  comm_.post_sends();
  for (std::size_t p = 0; p < n; ++p)
    if (p != me) comm_.recv(recv.subspan(p * block, block), static_cast<int>(p), kTag);
  comm_.flush_sends();
}

CompressedSync::CompressedSync(const core::ParallelPlan& plan, Communicator& dp, int world_rank,
                               int ranks_per_node, std::uint64_t seed)
    : plan_(plan), dp_(dp), compressor_(plan.compression, seed) {
  if (plan.sync == core::SyncMode::Flat) return;
  const int node = ranks_per_node > 0 ? world_rank / ranks_per_node : 0;
  intra_ = dp.split(node, dp.rank());
  inter_ = dp.split(intra_->rank(), dp.rank());
  if (intra_->size() * inter_->size() != dp.size())
    throw HwError(
        "hierarchical sync needs the same number of data-parallel replicas on every "
        "node; rank " +
        std::to_string(world_rank) + " has " + std::to_string(intra_->size()) +
        " on its node and " + std::to_string(inter_->size()) + " nodes");
}

double CompressedSync::sum(int tensor, std::span<float> grad, int rows, int cols) {
  const double bytes = sync(tensor, grad, rows, cols);
  if (plan_.sync == core::SyncMode::Delayed) {
    // Apply the previous iteration's sum (none on the first), keep this one.
    std::vector<float>& pending = compressor_.state_for(tensor).pending;
    if (pending.size() != grad.size()) pending.assign(grad.size(), 0.0f);
    std::swap_ranges(grad.begin(), grad.end(), pending.begin());
  }
  return bytes;
}

double CompressedSync::sync(int tensor, std::span<float> grad, int rows, int cols) {
  const auto dp = static_cast<float>(dp_.size());
  double bytes = 0;
  if (!intra_) {
    CommReduceGroup group(dp_);
    bytes = compressor_.average(tensor, grad, rows, cols, group);
    for (float& g : grad) g *= dp;
    return bytes;
  }
  const int k = intra_->size();
  const int block_rows = (rows + k - 1) / k;
  const auto block = static_cast<std::size_t>(block_rows) * static_cast<std::size_t>(cols);
  std::vector<float> padded(block * static_cast<std::size_t>(k), 0.0f);
  std::copy(grad.begin(), grad.end(), padded.begin());
  std::vector<float> mine(block);
  intra_->reduce_scatter_sum(padded, mine);
  bytes += 4.0 * static_cast<double>(padded.size());
  if (inter_->size() > 1) {
    CommReduceGroup group(*inter_);
    bytes += compressor_.average(tensor, mine, block_rows, cols, group);
    // The mean over nodes of the node sums, back to the sum over replicas.
    const auto nodes = static_cast<float>(inter_->size());
    for (float& m : mine) m *= nodes;
  }
  intra_->all_gather(mine, padded);
  bytes += 4.0 * static_cast<double>(padded.size());
  std::copy_n(padded.begin(), grad.size(), grad.begin());
  return bytes;
}

}  // namespace parashift::hw
