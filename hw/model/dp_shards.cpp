#include "hw/model/dp_shards.hpp"

#include <algorithm>

namespace parashift::hw {

ShardRange shard_of(std::size_t elements, int ranks, int rank) {
  const auto n = static_cast<std::size_t>(ranks);
  const std::size_t each = (elements + n - 1) / n;
  const std::size_t begin = std::min(elements, static_cast<std::size_t>(rank) * each);
  return {begin, std::min(elements, begin + each) - begin};
}

std::vector<ShardBucket> shard_buckets(const std::vector<std::size_t>& sizes, int ranks,
                                       std::size_t bucket_elements) {
  const auto n = static_cast<std::size_t>(ranks);
  std::vector<ShardBucket> buckets;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const std::size_t shard = (sizes[i] + n - 1) / n;
    if (buckets.empty() || (buckets.back().block + shard) * n > bucket_elements)
      buckets.emplace_back();
    ShardBucket& b = buckets.back();
    b.tensors.push_back(i);
    b.offsets.push_back(b.block);
    b.block += shard;
  }
  return buckets;
}

}  // namespace parashift::hw
