// The data-parallel gradient all-reduce of HwBackend (the replicated
// optimizer; the distributed optimizer's reduce-scatter and all-gather are
// in hw_backend_sharding.cpp), and the gradient norms the batch module reads.
#include <algorithm>
#include <array>
#include <functional>
#include <span>
#include <vector>

#include "hw/exec/hw_backend.hpp"

#include "core/compress/compression_fit.hpp"
#include "hw/exec/step_counters.hpp"

namespace parashift::hw {

namespace {

// Rows of the four gradient matrices (LayerTensors::all() order: wqkv, wo,
// w1, w2) on this tensor-parallel rank; columns are size / rows.
std::array<int, 4> gradient_rows(const LayerShape& s) {
  return {s.hidden, s.hidden_local(), s.hidden, s.ffn_local()};
}

}  // namespace

void HwBackend::all_reduce_gradients(Counters& c) {
  if (plan_.dp == 1) return;
  ScopedTimer timer(c.dp_ns, options_.virtual_clock);
  DeviceKernels& k = *kernels_;
  if (compressed_sync_) {
    // Matrix by matrix (hw/exec/compressed_sync.hpp), in backward's order.
    k.synchronize();
    const std::array<int, 4> rows = gradient_rows(shape_);
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
    groups_.sync_ring().all_reduce_sum(std::span<float>(dp_bucket_.data(), filled));
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

bool HwBackend::measures_gradient_norms() const {
  return options_.gradient_norms && plan_.dp > 1 && !sharded_optimizer() && !compressed_sync_ &&
         std::adjacent_find(micro_batches_.begin(), micro_batches_.end(), std::not_equal_to<>()) ==
             micro_batches_.end();
}

double HwBackend::gradient_sq_sum() const {
  kernels_->synchronize();
  double sum = 0;
  std::vector<float> host;
  for (const auto& [index, slot] : layers_)
    for (const DeviceBuffer* g : slot.grads.all()) {
      host.resize(g->size());
      kernels_->download(g->data(), std::span<float>(host));
      for (float x : host) sum += static_cast<double>(x) * x;
    }
  return sum;
}

std::vector<HostMatrix> HwBackend::host_gradients() const {
  kernels_->synchronize();
  const std::array<int, 4> rows = gradient_rows(shape_);
  std::vector<HostMatrix> out;
  for (const auto& [index, slot] : layers_) {
    const auto grads = slot.grads.all();
    for (std::size_t j = 0; j < grads.size(); ++j) {
      HostMatrix m{rows[j], static_cast<int>(grads[j]->size() / static_cast<std::size_t>(rows[j])),
                   std::vector<float>(grads[j]->size())};
      kernels_->download(grads[j]->data(), std::span<float>(m.values));
      out.push_back(std::move(m));
    }
  }
  return out;
}

std::vector<double> compression_probe_sums(std::span<const core::CompressionSpec> probes,
                                           std::span<const HostMatrix> matrices) {
  std::vector<double> sums(1 + probes.size(), 0.0);
  for (const HostMatrix& m : matrices) {
    for (float x : m.values) sums[0] += static_cast<double>(x) * x;
    for (std::size_t p = 0; p < probes.size(); ++p)
      sums[1 + p] += core::left_out_sq(probes[p], m.values, m.rows, m.cols);
  }
  return sums;
}

core::GradientNorms HwBackend::gradient_norms(double local_sq_sum, double reduced_sq_sum) const {
  // The loss is the mean over every micro-batch of the job, so a replica's
  // local gradient is m / M of the mean gradient of its own m micro-batches
  // (M = dp x m), and the sum over replicas is the mean over all of them.
  // Tensor and pipeline ranks hold disjoint parameters: the sums over a
  // replica's ranks are its norms. The reduced gradient is on every replica.
  const int dp = plan_.dp;
  const int m = micro_batches_.front();
  core::GradientNorms g;
  // Mean over replicas of |dp x g_local|^2 = dp^2 x (sum over replicas) / dp.
  g.replica_sq_norm = local_sq_sum * dp;
  g.replica_batch = m * plan_.micro_batch;
  g.global_sq_norm = reduced_sq_sum / dp;
  g.global_batch = m * dp * plan_.micro_batch;
  return g;
}

}  // namespace parashift::hw
