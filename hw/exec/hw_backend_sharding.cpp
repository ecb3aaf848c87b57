// HwBackend's distributed optimizer (plan.optimizer_sharding: distributed;
// ZeRO-1, Megatron's --use-distributed-optimizer): the replicas' gradients
// are reduce-scattered, so each data-parallel rank holds the summed
// gradients of its shard of every tensor (hw/model/dp_shards.hpp); it
// updates that shard of the weights with its shard of Adam's moments, and
// the updated shards are all-gathered back into every replica's weights.
// The same bytes cross the network as an all-reduce's; Adam's moments take
// 1/dp of the memory.
#include "hw/exec/hw_backend.hpp"

#include <algorithm>

#include "hw/exec/step_counters.hpp"

namespace parashift::hw {

std::vector<HwBackend::ShardTensor> HwBackend::shard_tensors() {
  const bool adam = options_.optimizer.kind == OptimizerKind::Adam;
  std::vector<ShardTensor> out;
  // Last layer first, as backward produces the gradients (and as the
  // all-reduce buckets run).
  for (auto it = layers_.rbegin(); it != layers_.rend(); ++it) {
    LayerSlot& slot = it->second;
    const auto w = slot.weights.all();
    const auto g = slot.grads.all();
    const auto m = slot.state.m.all();
    const auto v = slot.state.v.all();
    for (std::size_t i = 0; i < w.size(); ++i)
      out.push_back({w[i], g[i], adam ? m[i] : nullptr, adam ? v[i] : nullptr});
  }
  return out;
}

void HwBackend::reduce_scatter_gradients(Counters& c) {
  ScopedTimer timer(c.dp_ns, options_.virtual_clock);
  DeviceKernels& k = *kernels_;
  const int dp = plan_.dp;
  const auto tensors = shard_tensors();
  std::vector<std::size_t> sizes;
  for (const ShardTensor& t : tensors) sizes.push_back(t.grads->size());
  shard_buckets_ =
      shard_buckets(sizes, dp, std::max<std::size_t>(1, options_.dp_bucket_bytes / sizeof(float)));
  std::size_t total = 0;
  for (const ShardBucket& b : shard_buckets_) total += b.block;
  if (shard_block_.size() != total) shard_block_ = DeviceBuffer(k, total);
  std::size_t at = 0;
  for (const ShardBucket& b : shard_buckets_) {
    float* pack = shard_pack(b);
    // Block r: rank r's shard of each tensor, zero-padded to the full shard.
    for (int r = 0; r < dp; ++r)
      for (std::size_t j = 0; j < b.tensors.size(); ++j) {
        const DeviceBuffer& g = *tensors[b.tensors[j]].grads;
        const ShardRange range = shard_of(g.size(), dp, r);
        const std::size_t full = shard_of(g.size(), dp, 0).count;
        float* into = pack + static_cast<std::size_t>(r) * b.block + b.offsets[j];
        k.copy(g.data() + range.begin, into, range.count);
        if (range.count < full) k.fill_zero(into + range.count, full - range.count);
      }
    k.synchronize();
    groups_.dp->reduce_scatter_sum({pack, b.block * static_cast<std::size_t>(dp)},
                                   {shard_block_.data() + at, b.block});
    c.dp_bytes += static_cast<double>(b.block) * dp * sizeof(float);
    at += b.block;
  }
  k.synchronize();
}

void HwBackend::update_weight_shards() {
  const int dp = plan_.dp, me = groups_.coord.dp;
  const auto tensors = shard_tensors();
  std::size_t at = 0;
  for (const ShardBucket& b : shard_buckets_) {
    for (std::size_t j = 0; j < b.tensors.size(); ++j) {
      const ShardTensor& t = tensors[b.tensors[j]];
      const ShardRange mine = shard_of(t.weights->size(), dp, me);
      device_optimizer_update_range(
          *kernels_, options_.optimizer, iteration_ + 1, t.weights->data() + mine.begin,
          shard_block_.data() + at + b.offsets[j], t.m != nullptr ? t.m->data() : nullptr,
          t.v != nullptr ? t.v->data() : nullptr, mine.count);
    }
    at += b.block;
  }
}

void HwBackend::all_gather_weights(Counters& c) {
  ScopedTimer timer(c.dp_ns, options_.virtual_clock);
  DeviceKernels& k = *kernels_;
  const int dp = plan_.dp, me = groups_.coord.dp;
  const auto tensors = shard_tensors();
  std::size_t at = 0;
  for (const ShardBucket& b : shard_buckets_) {
    // This rank's updated shards into its block (the gradients there are spent).
    float* block = shard_block_.data() + at;
    for (std::size_t j = 0; j < b.tensors.size(); ++j) {
      const DeviceBuffer& w = *tensors[b.tensors[j]].weights;
      const ShardRange mine = shard_of(w.size(), dp, me);
      k.copy(w.data() + mine.begin, block + b.offsets[j], mine.count);
    }
    float* pack = shard_pack(b);
    k.synchronize();
    groups_.dp->all_gather({block, b.block}, {pack, b.block * static_cast<std::size_t>(dp)});
    c.dp_bytes += static_cast<double>(b.block) * dp * sizeof(float);
    for (int r = 0; r < dp; ++r)
      for (std::size_t j = 0; j < b.tensors.size(); ++j) {
        DeviceBuffer& w = *tensors[b.tensors[j]].weights;
        const ShardRange range = shard_of(w.size(), dp, r);
        k.copy(pack + static_cast<std::size_t>(r) * b.block + b.offsets[j], w.data() + range.begin,
               range.count);
      }
    at += b.block;
  }
  k.synchronize();
}

float* HwBackend::shard_pack(const ShardBucket& bucket) {
  const std::size_t need = bucket.block * static_cast<std::size_t>(plan_.dp);
  if (shard_pack_.size() < need) shard_pack_ = DeviceBuffer(*kernels_, need);
  return shard_pack_.data();
}

}  // namespace parashift::hw
