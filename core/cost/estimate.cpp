#include "core/cost/estimate.hpp"

#include "core/cost/overlap.hpp"

#include <algorithm>

#include "core/cost/fsdp.hpp"
#include "core/cost/grad_sync.hpp"

namespace parashift::core {

namespace {

double ns(TimeNs t) {
  return static_cast<double>(t);
}

TimeNs calls_ns(const CollectiveCall& c, int ranks, int per_node, const ClusterView& cluster) {
  if (c.count <= 0) return 0;
  return std::llround(
      c.count * static_cast<double>(collective_ns(c.kind, c.bytes, ranks, per_node, cluster)));
}

}  // namespace

IterationEstimate estimate_iteration(const ModelSpec& model, const DeviceSpec& device,
                                     const ClusterView& cluster, const ParallelPlan& plan,
                                     int seq_len) {
  return estimate_iteration(model, device, cluster, plan, seq_len, CostOptions{});
}

IterationEstimate estimate_iteration(const ModelSpec& model, const DeviceSpec& device,
                                     const ClusterView& cluster, const ParallelPlan& plan,
                                     int seq_len, const CostOptions& options) {
  return estimate_iteration(model, device, cluster, plan,
                            work_profile(model, device, plan, seq_len, options), options);
}

IterationEstimate estimate_iteration(const ModelSpec& model, const DeviceSpec& device,
                                     const ClusterView& cluster, const ParallelPlan& plan,
                                     const WorkProfile& profile, const CostOptions& options) {
  const LayerWork& layer = profile.layer;
  const GroupPlacement place = group_placement(plan, cluster.gpus_per_node);
  const int p = plan.pp;
  const int v = plan.schedule == Schedule::Interleaved1F1B ? plan.virtual_stages : 1;
  const TimeNs m = std::max(1, plan.micro_batches());
  // The busiest stage: layers split evenly over p*v chunks (rounded up).
  const int chunks = p * v;
  const TimeNs layers = static_cast<TimeNs>((model.layers + chunks - 1) / chunks) * v;

  // Per micro-batch on that stage. Stage 0 adds the embedding, the last
  // stage the head and loss; with p == 1 one GPU runs both.
  const TimeNs embed = profile.embedding_forward_ns + profile.embedding_backward_ns;
  const TimeNs head = profile.head_forward_ns + profile.head_backward_ns;
  const bool head_heavier = head >= embed;
  const TimeNs extra_fwd =
      p == 1 ? profile.embedding_forward_ns + profile.head_forward_ns
             : (head_heavier ? profile.head_forward_ns : profile.embedding_forward_ns);
  const TimeNs extra_bwd =
      p == 1 ? profile.embedding_backward_ns + profile.head_backward_ns
             : (head_heavier ? profile.head_backward_ns : profile.embedding_backward_ns);
  const TimeNs fwd = layers * layer.forward_ns + extra_fwd;
  const TimeNs bwd = layers * layer.backward_ns + extra_bwd;
  const TimeNs rec = layers * layer.recompute_ns;

  // Tensor-parallel collectives sit between the GEMMs that produce and use
  // them: exposed in full, or with TP overlap only beyond the GEMM time.
  const TimeNs tp_fwd = calls_ns(layer.tp_forward, plan.tp, place.tp_per_node, cluster) +
                        calls_ns(layer.tp_forward_scatter, plan.tp, place.tp_per_node, cluster);
  const TimeNs tp_bwd = calls_ns(layer.tp_backward, plan.tp, place.tp_per_node, cluster) +
                        calls_ns(layer.tp_backward_scatter, plan.tp, place.tp_per_node, cluster);
  TimeNs tp_layer = tp_fwd + tp_bwd;
  if (options.tp_comm_overlap) {
    const TimeNs gemm_fwd = layer.gemm_forward_ns;
    const TimeNs gemm_bwd =
        2 * layer.gemm_forward_ns + std::llround(plan.full_recompute_share(model.layers) *
                                                 static_cast<double>(layer.gemm_forward_ns));
    const double kept = 1.0 - options.tp_overlap_share;
    auto exposed = [kept](TimeNs comm, TimeNs gemm) {
      const auto part = static_cast<TimeNs>(kept * static_cast<double>(comm));
      return std::max(part, comm - gemm);
    };
    tp_layer = exposed(tp_fwd, gemm_fwd) + exposed(tp_bwd, gemm_bwd);
  }
  // The context-parallel ring overlaps each step's attention block.
  const TimeNs cp_fwd = calls_ns(layer.cp_forward, 2, plan.cp > place.cp_per_node ? 1 : 2, cluster);
  const TimeNs cp_bwd =
      calls_ns(layer.cp_backward, 2, plan.cp > place.cp_per_node ? 1 : 2, cluster);
  const TimeNs cp_layer = cp_exposed_ns(cp_fwd, layer.attention_forward_ns) +
                          cp_exposed_ns(cp_bwd, layer.attention_backward_ns);

  const TimeNs per_mb = fwd + bwd + rec + layers * (tp_layer + cp_layer);

  // Pipeline: fill and drain, and the activation sends.
  TimeNs bubble = 0;
  TimeNs pp_comm = 0;
  if (p > 1) {
    switch (plan.schedule) {
      case Schedule::GPipe:
      case Schedule::OneFOneB:
        bubble = (p - 1) * per_mb;
        break;
      case Schedule::Interleaved1F1B:
        bubble = (p - 1) * per_mb / v;
        break;
      case Schedule::ZeroBubbleH1: {
        // Weight-gradient GEMMs fill the drain (Qi et al. 2023): (p-1)(t_f+t_b-t_w).
        const TimeNs weight_grad = layers * (layer.backward_ns - layer.backward_input_ns);
        bubble = (p - 1) * std::max<TimeNs>(0, per_mb - weight_grad);
        break;
      }
    }
    const TimeNs hop = collective_ns(CollectiveKind::SendRecv, profile.pp_activation_bytes, 2,
                                     place.pp_crosses_nodes ? 1 : 2, cluster);
    // Blocking sends (activation forward, gradient backward) on every step of
    // the non-interleaved schedules; Megatron overlaps them with compute in
    // the interleaved steady state, leaving the fill and drain: each
    // steady-state send runs under the next chunk's forward or backward, so
    // only what a send takes beyond that chunk is exposed (a chunk of one
    // layer on a slow network: the sends pace the pipeline).
    pp_comm =
        plan.schedule == Schedule::Interleaved1F1B ? 2 * (p - 1) * v * hop : 2 * (m + p - 1) * hop;
    if (plan.schedule == Schedule::Interleaved1F1B) {
      const TimeNs chunk_fwd = (fwd + layers * tp_layer / 2) / v;
      const TimeNs chunk_bwd = (bwd + rec + layers * (tp_layer - tp_layer / 2)) / v;
      const TimeNs steady = std::max<TimeNs>(0, m - (p - 1)) * v;
      pp_comm += steady * (pipeline_send_exposed_ns(hop, chunk_fwd) +
                           pipeline_send_exposed_ns(hop, chunk_bwd));
    }
  }

  // Data-parallel synchronisation of the stage's parameters (the first
  // stage's: it holds the embedding, and the head too when it is the only one).
  const double params =
      stage_params_on_gpu(profile, model.tied_embeddings, ns(layers), true, p == 1);
  const double grad_bytes = params * profile.grad_bytes_per_param;
  const double weight_bytes = params * 2.0;
  const int dp = plan.dp;
  const int dpn = place.dp_per_node;
  const TimeNs tail_layers = std::max<TimeNs>(1, layers);
  TimeNs dp_comm = 0;
  TimeNs dp_exposed = 0;
  const TimeNs last_bwd = bwd + rec + layers * tp_layer;
  const TimeNs first_fwd = fwd;
  switch (plan.optimizer_sharding) {
    case OptimizerSharding::None: {
      // The plan's sync mode and compressor, in buckets (core/cost/grad_sync.hpp).
      const StageSync sync = stage_sync(plan, model, params, profile.grad_bytes_per_param, dpn,
                                        cluster, compute_rates(device));
      dp_comm = sync.now_ns() + sync.deferred_ns;
      dp_exposed =
          (options.overlap_grad_reduce ? stage_sync_exposed_ns(sync, last_bwd) : sync.now_ns()) +
          // Delayed sync: its deferred steps run under the next iteration's compute.
          std::max<TimeNs>(0, sync.deferred_ns - m * (fwd + bwd + rec));
      break;
    }
    case OptimizerSharding::Distributed: {
      const TimeNs rs = collective_ns(CollectiveKind::ReduceScatter, grad_bytes, dp, dpn, cluster);
      const TimeNs ag = collective_ns(CollectiveKind::AllGather, weight_bytes, dp, dpn, cluster);
      dp_comm = rs + ag;
      dp_exposed =
          (options.overlap_grad_reduce ? overlap_exposed_ns(rs, last_bwd, rs / tail_layers) : rs) +
          (options.overlap_param_gather ? param_gather_exposed_ns(ag, first_fwd, layers) : ag);
      break;
    }
    case OptimizerSharding::Fsdp: {
      // Per micro-batch, per layer (core/cost/fsdp.hpp).
      const double layer_params = profile.params_per_gpu_layer;
      const double other_params = std::max(0.0, params - ns(layers) * layer_params);
      const FsdpGroups groups = fsdp_groups(plan, dpn);
      const FsdpComm c =
          fsdp_comm_of(cluster, groups, layer_params, other_params, profile.grad_bytes_per_param);
      const TimeNs mb_comm = fsdp_comm_ns(c, layers);
      // HSDP: the replicas' all-reduce of the gradient shards, once.
      const TimeNs replica =
          hsdp_replica_sync_ns(cluster, groups, params, profile.grad_bytes_per_param);
      dp_comm = m * mb_comm + replica;
      if (options.overlap_param_gather && options.overlap_grad_reduce) {
        const TimeNs layer_fwd = layer.forward_ns + tp_layer / 2;
        const TimeNs layer_bwd = layer.backward_ns + layer.recompute_ns + tp_layer / 2;
        // Each of an interleaved stage's chunks is its own pass.
        dp_exposed = m * std::min(mb_comm, fsdp_forward_exposed_ns(c, layers, layer_fwd, v) +
                                               fsdp_backward_exposed_ns(c, layers, layer_bwd, v)) +
                     overlap_exposed_ns(replica, last_bwd, replica / tail_layers);
      } else {
        dp_exposed = dp_comm;
      }
      break;
    }
  }

  // Optimizer step over the parameters this GPU owns.
  const double owned = params / plan.shard_degree();
  const TimeNs optimizer = seconds_to_ns(owned * profile.optimizer_s_per_param);

  IterationEstimate e;
  e.forward_ns = m * fwd;
  e.backward_ns = m * bwd;
  e.recompute_ns = m * rec;
  e.tp_comm_ns = m * layers * tp_layer;
  e.cp_comm_ns = m * layers * cp_layer;
  e.pp_comm_ns = pp_comm;
  e.bubble_ns = bubble;
  e.dp_comm_ns = dp_comm;
  e.dp_comm_exposed_ns = dp_exposed;
  e.optimizer_ns = optimizer;
  e.total_ns = e.forward_ns + e.backward_ns + e.recompute_ns + e.tp_comm_ns + e.cp_comm_ns +
               e.pp_comm_ns + e.bubble_ns + e.dp_comm_exposed_ns + e.optimizer_ns;
  e.memory = peak_memory(model, plan, profile.seq_len);
  e.model_flops = model_flops_per_iteration(model, plan, profile.seq_len);
  const double seconds = ns_to_s(e.total_ns);
  const double peak = plan.precision == Precision::Fp8 && device.peak_fp8_flops_per_s > 0
                          ? device.peak_fp8_flops_per_s
                          : device.peak_bf16_flops_per_s;
  if (seconds > 0) {
    e.mfu = e.model_flops / (seconds * plan.gpus() * peak);
    e.tokens_per_s = static_cast<double>(plan.global_batch) * profile.seq_len / seconds;
  }
  return e;
}

}  // namespace parashift::core
