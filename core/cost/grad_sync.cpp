#include "core/cost/grad_sync.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "core/cost/estimate.hpp"
#include "core/cost/overlap.hpp"

namespace parashift::core {

std::vector<MatrixShape> layer_gradient_matrices(const ModelSpec& model, int tp, double layers) {
  const double h = model.hidden;
  const double t = tp;
  const double kv_dim = static_cast<double>(model.kv_heads) * model.head_dim();
  const double up = model.ffn_kind == FfnKind::SwiGlu ? 2.0 * model.ffn_hidden : model.ffn_hidden;
  return {{h, (h + 2.0 * kv_dim) / t, layers},
          {h / t, h, layers},
          {h, up / t, layers},
          {model.ffn_hidden / t, h, layers}};
}

std::vector<MatrixShape> shard_matrices(std::span<const MatrixShape> matrices, int k) {
  std::vector<MatrixShape> out(matrices.begin(), matrices.end());
  for (MatrixShape& m : out) m.rows = std::ceil(m.rows / k);
  return out;
}

std::vector<SyncStep> grad_sync_steps(const ParallelPlan& plan,
                                      std::span<const MatrixShape> matrices, double grad_bytes,
                                      double elem_bytes, int dp_per_node) {
  const int dp = plan.dp;
  if (dp <= 1 || grad_bytes <= 0) return {};
  std::vector<SyncStep> steps;
  auto add = [&](SyncScope scope, const std::vector<WireCall>& calls, int ranks, int per_node) {
    for (const WireCall& c : calls) steps.push_back({scope, c, ranks, per_node});
  };
  const int k = std::max(1, std::min(dp_per_node, dp));
  if (plan.sync == SyncMode::Flat || k == 1) {
    // Flat; hierarchical with one replica a node has nothing to do inside it.
    const SyncScope scope =
        k == 1 && plan.sync != SyncMode::Flat ? SyncScope::InterNode : SyncScope::Group;
    if (!plan.compression.enabled())
      add(scope, {{CollectiveKind::AllReduce, grad_bytes}}, dp, k);
    else
      add(scope, sync_calls(plan.compression, matrices, elem_bytes, dp), dp, k);
    if (plan.sync == SyncMode::Delayed)
      for (SyncStep& s : steps) s.deferred = true;
    return steps;
  }
  const int nodes = dp / k;
  add(SyncScope::IntraNode, {{CollectiveKind::ReduceScatter, grad_bytes}}, k, k);
  const std::size_t first_deferred = steps.size();
  if (nodes > 1) {
    if (!plan.compression.enabled()) {
      add(SyncScope::InterNode, {{CollectiveKind::AllReduce, grad_bytes / k}}, nodes, 1);
    } else {
      const auto shards = shard_matrices(matrices, k);
      add(SyncScope::InterNode, sync_calls(plan.compression, shards, elem_bytes, nodes), nodes, 1);
    }
  }
  add(SyncScope::IntraNode, {{CollectiveKind::AllGather, grad_bytes}}, k, k);
  if (plan.sync == SyncMode::Delayed)
    for (std::size_t i = first_deferred; i < steps.size(); ++i) steps[i].deferred = true;
  return steps;
}

std::vector<MatrixShape> bucket_gradient_matrices(const ParallelPlan& plan, const ModelSpec& model,
                                                  double bucket_params) {
  auto matrices = layer_gradient_matrices(model, plan.tp, 1.0);
  double layer_elements = 0;
  for (const MatrixShape& m : matrices) layer_elements += m.elements();
  for (MatrixShape& m : matrices) m.count = bucket_params / layer_elements;
  return matrices;
}

std::vector<SyncStep> bucket_sync_steps(const ParallelPlan& plan, const ModelSpec& model,
                                        double bucket_params, double elem_bytes, int dp_per_node) {
  std::vector<MatrixShape> matrices;
  if (plan.compression.enabled()) matrices = bucket_gradient_matrices(plan, model, bucket_params);
  return grad_sync_steps(plan, matrices, bucket_params * elem_bytes, elem_bytes, dp_per_node);
}

TimeNs bucket_compression_ns(const ParallelPlan& plan, const ModelSpec& model, double bucket_params,
                             int dp_per_node, const ComputeRates& rates) {
  if (!plan.compression.enabled() || plan.dp <= 1) return 0;
  const int k = plan.sync != SyncMode::Flat ? std::max(1, dp_per_node) : 1;
  return compression_compute_ns(
      plan.compression, shard_matrices(bucket_gradient_matrices(plan, model, bucket_params), k),
      rates);
}

StageSync stage_sync(const ParallelPlan& plan, const ModelSpec& model, double params,
                     double elem_bytes, int dp_per_node, const ClusterView& cluster,
                     const ComputeRates& rates) {
  StageSync out;
  if (plan.dp <= 1 || params <= 0) return out;
  out.buckets =
      static_cast<int>(std::max(1.0, std::ceil(params / megatron_bucket_params(plan.dp))));
  const double bucket_params = params / out.buckets;
  const TimeNs compress = bucket_compression_ns(plan, model, bucket_params, dp_per_node, rates);
  auto steps = bucket_sync_steps(plan, model, bucket_params, elem_bytes, dp_per_node);
  std::erase_if(steps, [](const SyncStep& s) { return s.deferred; });
  out.bucket_ns = compress + grad_sync_ns(steps, cluster);
  if (plan.sync == SyncMode::Delayed)
    out.deferred_ns =
        deferred_sync_ns(bucket_sync_steps(plan, model, params, elem_bytes, dp_per_node), cluster);
  return out;
}

TimeNs stage_sync_exposed_ns(const StageSync& sync, TimeNs backward_ns) {
  if (sync.buckets <= 0) return 0;
  const TimeNs filled_first = backward_ns / sync.buckets;
  return overlap_exposed_ns(sync.now_ns(), backward_ns - filled_first, sync.bucket_ns);
}

TimeNs grad_sync_ns(std::span<const SyncStep> steps, const ClusterView& cluster) {
  TimeNs total = 0;
  for (const SyncStep& s : steps)
    total += collective_ns(s.call.kind, s.call.bytes, s.ranks, s.ranks_per_node, cluster);
  return total;
}

TimeNs deferred_sync_ns(std::span<const SyncStep> steps, const ClusterView& cluster) {
  TimeNs total = 0;
  for (const SyncStep& s : steps)
    if (s.deferred)
      total += collective_ns(s.call.kind, s.call.bytes, s.ranks, s.ranks_per_node, cluster);
  return total;
}

TimeNs compression_compute_ns(const CompressionSpec& spec, std::span<const MatrixShape> matrices,
                              const ComputeRates& rates) {
  if (!spec.enabled()) return 0;
  double seconds = 0;
  for (const MatrixShape& m : matrices) {
    const double n = m.count * m.elements();
    const double feedback = memory_s(rates, 3.0 * 4.0 * n);
    switch (spec.kind) {
      case CompressorKind::PowerSgd: {
        const double r = spec.rank;
        const double gemms = m.count * (gemm_s(rates, m.rows, r, m.cols, Precision::Bf16) +
                                        gemm_s(rates, m.cols, r, m.rows, Precision::Bf16) +
                                        gemm_s(rates, m.rows, m.cols, r, Precision::Bf16));
        seconds += std::max(gemms, memory_s(rates, 3.0 * 4.0 * n)) + feedback;
        break;
      }
      case CompressorKind::TopK:
        seconds += memory_s(rates, 8.0 * 4.0 * n) + feedback;
        break;
      case CompressorKind::Int8:
        seconds += memory_s(rates, 4.0 * 5.0 * n) + feedback;
        break;
      case CompressorKind::None:
        break;
    }
  }
  return seconds_to_ns(seconds);
}

std::vector<std::vector<int>> scope_rings(const std::vector<int>& ring, SyncScope scope,
                                          const std::function<int(int)>& host_of) {
  if (scope == SyncScope::Group) return {ring};
  std::unordered_map<int, std::size_t> slot_of_host;  // hosts in the order the ring reaches them
  std::vector<std::vector<int>> by_host;
  for (int id : ring) {
    const auto [at, added] = slot_of_host.try_emplace(host_of(id), by_host.size());
    if (added) by_host.emplace_back();
    by_host[at->second].push_back(id);
  }
  if (scope == SyncScope::IntraNode) return by_host;
  std::vector<std::vector<int>> out;
  for (const auto& local : by_host) {
    if (out.size() < local.size()) out.resize(local.size());
    for (std::size_t j = 0; j < local.size(); ++j) out[j].push_back(local[j]);
  }
  return out;
}

}  // namespace parashift::core
