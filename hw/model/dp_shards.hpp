// Megatron's distributed optimizer (plan.optimizer_sharding: distributed,
// ZeRO-1): each data-parallel rank updates one shard of every weight
// tensor and keeps Adam's moments for that shard only. Gradients are
// reduce-scattered over the replicas and the updated weights all-gathered
// back, in buckets; this is how tensors split into shards and buckets.
#pragma once

#include <cstddef>
#include <vector>

namespace parashift::hw {

struct ShardRange {
  std::size_t begin = 0;
  std::size_t count = 0;
  bool operator==(const ShardRange&) const = default;
};

/// Rank `rank`'s part of `elements` split over `ranks`: ceil(elements /
/// ranks) each in rank order, the last ones short or empty.
ShardRange shard_of(std::size_t elements, int ranks, int rank);

/// Consecutive tensors collected for one reduce-scatter and all-gather. The
/// collective's buffer is `ranks` blocks of `block` elements; block r holds
/// rank r's shard of each tensor at `offsets[i]` (padded to the full shard
/// size, so every block has the same layout).
struct ShardBucket {
  std::vector<std::size_t> tensors;  // indices into the sizes given
  std::vector<std::size_t> offsets;  // of each tensor's shard in a block
  std::size_t block = 0;
};

/// Tensors of `sizes` (in order) into buckets of at most `bucket_elements`
/// (ranks x block); a tensor larger than that has a bucket of its own.
std::vector<ShardBucket> shard_buckets(const std::vector<std::size_t>& sizes, int ranks,
                                       std::size_t bucket_elements);

}  // namespace parashift::hw
