// The data-parallel gradient sync of the replicated optimizer under the
// plan's sync mode and compressor: one list of steps, each a collective over
// one scope of the data-parallel group, that the cost model prices with
// NCCL's closed forms (grad_sync_ns) and the simulator runs as flows. With
// k replicas a node and n = dp / k nodes:
//   flat:          the compressor's calls (core/compress/compression.hpp)
//                  over all dp ranks; uncompressed, one all-reduce.
//   hierarchical:  a reduce-scatter over the k replicas of a node at full
//                  precision; the compressor's calls over the n nodes on each
//                  shard (each matrix's rows / k), every local rank on its
//                  own rail at once; an all-gather over the node.
//   delayed:       the hierarchical steps, all but the reduce-scatter
//                  deferred to the next iteration (SyncStep::deferred).
// The layer norms' 2 x hidden values a layer travel uncompressed with the
// bucket in practice; the compressed steps leave them out (< 0.1% of a
// layer's bytes for the shipped models).
#pragma once

#include <functional>
#include <vector>

#include "core/compress/compression.hpp"
#include "core/cost/cluster_view.hpp"
#include "core/cost/compute_model.hpp"
#include "core/model_spec.hpp"
#include "core/parallel_plan.hpp"
#include "core/units.hpp"

namespace parashift::core {

enum class SyncScope { Group, IntraNode, InterNode };

struct SyncStep {
  SyncScope scope = SyncScope::Group;
  WireCall call;
  int ranks = 1;           // members of each group of this scope
  int ranks_per_node = 1;  // ... of which on one node
  /// Delayed sync: runs during the next iteration (its inter-node all-reduce
  /// and node all-gather), not behind this iteration's backward.
  bool deferred = false;
};

/// One transformer layer's gradient matrices on one GPU under tensor
/// parallelism tp: QKV (hidden x (hidden + 2 kv_dim) / tp), the attention
/// output ((hidden / tp) x hidden), the MLP's up (and gate: hidden x
/// ffn / tp each, fused) and down ((ffn / tp) x hidden); each `layers` times.
std::vector<MatrixShape> layer_gradient_matrices(const ModelSpec& model, int tp, double layers);

/// The steps of one sync of `grad_bytes` of gradients in `matrices` (each
/// element `elem_bytes`) over plan.dp replicas, `dp_per_node` to a node.
std::vector<SyncStep> grad_sync_steps(const ParallelPlan& plan,
                                      std::span<const MatrixShape> matrices, double grad_bytes,
                                      double elem_bytes, int dp_per_node);

/// The steps of one gradient bucket of `bucket_params` parameters (Megatron's
/// DDP buckets, core::megatron_bucket_params), as the simulator and the
/// calibration time them: the bucket carries its share of a layer's matrix
/// mix (layer_gradient_matrices x bucket_params / a layer's elements).
std::vector<SyncStep> bucket_sync_steps(const ParallelPlan& plan, const ModelSpec& model,
                                        double bucket_params, double elem_bytes, int dp_per_node);

/// A bucket's share of a layer's matrix mix (what bucket_sync_steps sends).
std::vector<MatrixShape> bucket_gradient_matrices(const ParallelPlan& plan, const ModelSpec& model,
                                                  double bucket_params);
/// The compressor's GPU time on one bucket (compression_compute_ns of each
/// rank's part: its shard under hierarchical sync).
TimeNs bucket_compression_ns(const ParallelPlan& plan, const ModelSpec& model, double bucket_params,
                             int dp_per_node, const ComputeRates& rates);

/// A stage's gradient sync of `params` as Megatron's DDP runs it and the
/// simulator times it (sim/iteration.cpp): buckets of
/// megatron_bucket_params(dp), each compressed then synchronised in turn on
/// the group's stream once backward has filled it (its compressor and
/// non-deferred steps, with each call's latency); a delayed sync's deferred
/// steps run once over all `params` under the next iteration.
struct StageSync {
  int buckets = 0;
  TimeNs bucket_ns = 0;    ///< one bucket's compressor and non-deferred steps
  TimeNs deferred_ns = 0;  ///< the deferred steps, once
  TimeNs now_ns() const { return buckets * bucket_ns; }
};
StageSync stage_sync(const ParallelPlan& plan, const ModelSpec& model, double params,
                     double elem_bytes, int dp_per_node, const ClusterView& cluster,
                     const ComputeRates& rates);

/// What of the sync's non-deferred part a backward of `backward_ns` does not
/// hide when bucket b of B is ready at (b + 1) / B of it and the buckets run
/// one after another: the last bucket always, and all of them beyond the
/// backward after the first bucket filled (overlap_exposed_ns).
TimeNs stage_sync_exposed_ns(const StageSync& sync, TimeNs backward_ns);

/// The steps' time on the cluster's links (NCCL's tuner picks each call's
/// algorithm and protocol).
TimeNs grad_sync_ns(std::span<const SyncStep> steps, const ClusterView& cluster);
/// ... of the deferred steps only.
TimeNs deferred_sync_ns(std::span<const SyncStep> steps, const ClusterView& cluster);

/// GPU time the compressor spends per sync on `matrices` (its shard of them
/// under hierarchical), not overlapped with the sync it feeds:
///   powersgd:R  three GEMMs (M Q, M^T P, P Q^T) of 2 x rows x cols x R FLOPs
///               each, at least the HBM time of reading M three times;
///   topk:F      eight passes of 4 B over the elements (magnitude, selection,
///               residual) at HBM speed;
///   int8        two quantisations and two dequantisations (the shards'
///               sum and the gathered result), 4 + 1 B per element each;
/// plus error feedback, three passes of 4 B (read, add, write back).
TimeNs compression_compute_ns(const CompressionSpec& spec, std::span<const MatrixShape> matrices,
                              const ComputeRates& rates);

/// The rings of `scope` cut from one data-parallel ring (ids of GPUs or of
/// ranks; `host_of` gives each one's host), as a sync's steps run them:
/// Group: the ring; IntraNode: the members on each host; InterNode: for
/// each place j on a host, the j-th member of every host (one rail each).
/// Hosts and members keep the order the ring reaches them in.
std::vector<std::vector<int>> scope_rings(const std::vector<int>& ring, SyncScope scope,
                                          const std::function<int(int)>& host_of);

/// The shard each rank compresses under hierarchical sync: rows / k.
std::vector<MatrixShape> shard_matrices(std::span<const MatrixShape> matrices, int k);

}  // namespace parashift::core
