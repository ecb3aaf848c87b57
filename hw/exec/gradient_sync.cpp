// The data-parallel gradient all-reduce of HwBackend (the replicated
// optimizer; the distributed optimizer's reduce-scatter and all-gather are
// in hw_backend_sharding.cpp).
#include <algorithm>
#include <array>

#include "hw/exec/hw_backend.hpp"
#include "hw/exec/step_counters.hpp"

namespace parashift::hw {

void HwBackend::all_reduce_gradients(Counters& c) {
  if (plan_.dp == 1) return;
  ScopedTimer timer(c.dp_ns);
  DeviceKernels& k = *kernels_;
  if (compressed_sync_) {
    // Matrix by matrix (hw/exec/compressed_sync.hpp), in backward's order.
    k.synchronize();
    const std::array<int, 4> rows{shape_.hidden, shape_.hidden_local(), shape_.hidden,
                                  shape_.ffn_local()};
    for (auto it = layers_.rbegin(); it != layers_.rend(); ++it) {
      const auto grads = it->second.grads.all();
      for (std::size_t j = 0; j < grads.size(); ++j) {
        DeviceBuffer& g = *grads[j];
        const int cols = static_cast<int>(g.size() / static_cast<std::size_t>(rows[j]));
        c.dp_bytes += compressed_sync_->sum(it->first * 4 + static_cast<int>(j),
                                            std::span<float>(g.data(), g.size()), rows[j], cols);
      }
    }
    return;
  }
  // Buckets of dp_bucket_bytes filled from the last layer backwards (the
  // order backward produces them, as Megatron's DDP buckets do), gathered
  // into one device buffer, summed, and scattered back.
  std::vector<DeviceBuffer*> grads;
  for (auto it = layers_.rbegin(); it != layers_.rend(); ++it)
    for (DeviceBuffer* g : it->second.grads.all()) grads.push_back(g);
  const std::size_t bucket_elems =
      std::max<std::size_t>(1, options_.dp_bucket_bytes / sizeof(float));
  if (dp_bucket_.size() != bucket_elems) dp_bucket_ = DeviceBuffer(k, bucket_elems);
  std::size_t filled = 0;
  struct Piece {
    float* data;
    std::size_t count;
  };
  std::vector<Piece> pieces;
  auto flush = [&] {
    if (filled == 0) return;
    k.synchronize();
    groups_.dp->all_reduce_sum(std::span<float>(dp_bucket_.data(), filled));
    c.dp_bytes += static_cast<double>(filled) * sizeof(float);
    std::size_t at = 0;
    for (const Piece& p : pieces) {
      k.copy(dp_bucket_.data() + at, p.data, p.count);
      at += p.count;
    }
    filled = 0;
    pieces.clear();
  };
  for (DeviceBuffer* g : grads) {
    std::size_t done = 0;
    while (done < g->size()) {
      const std::size_t take = std::min(g->size() - done, bucket_elems - filled);
      k.copy(g->data() + done, dp_bucket_.data() + filled, take);
      pieces.push_back({g->data() + done, take});
      filled += take;
      done += take;
      if (filled == bucket_elems) flush();
    }
  }
  flush();
  k.synchronize();
}

}  // namespace parashift::hw
