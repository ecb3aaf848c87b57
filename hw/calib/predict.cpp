#include "hw/calib/predict.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/pipeline_schedule.hpp"
#include "core/scenario/scenario.hpp"
#include "core/work_split.hpp"
#include "hw/calib/executor_kernels.hpp"
#include "hw/model/dp_shards.hpp"
#include "hw/model/layer.hpp"

namespace parashift::hw {

namespace {

core::TimeNs to_ns(double seconds) {
  return static_cast<core::TimeNs>(std::llround(seconds * 1e9));
}

// Compute seconds of one pass of one layer (no collectives).
struct PassTime {
  double gemm_s = 0, attention_s = 0, elementwise_s = 0;
  double total() const { return gemm_s + attention_s + elementwise_s; }
};

PassTime pass_time(const LayerOps& ops, const LayerShape& shape, const CalibrationProfile& p) {
  PassTime t;
  for (const GemmOp& g : ops.gemms) {
    // The per-head GEMMs (count = heads x sequences) are the attention core.
    const bool attention = g.count == shape.heads_local() * shape.sequences &&
                           (g.m == shape.seq_len && (g.n == shape.seq_len || g.k == shape.seq_len));
    (attention ? t.attention_s : t.gemm_s) += gemm_op_s(p, g) * g.count;
  }
  for (const PointwiseOp& op : ops.pointwise) {
    const double s = op.elements() * kernel_ns_per_element(p, to_string(op.kind)) * 1e-9;
    const bool softmax =
        op.kind == PointwiseKind::CausalSoftmax || op.kind == PointwiseKind::CausalSoftmaxBackward;
    (softmax ? t.attention_s : t.elementwise_s) += s;
  }
  t.elementwise_s += ops.stream_bytes / p.memory_Bps;
  // Kernel costs are CPU time on a core; the rank holds a core cpu_share of the time.
  const double wall = 1.0 / p.cpu_share;
  return {t.gemm_s * wall, t.attention_s * wall, t.elementwise_s * wall};
}

// Seconds of one pass's tensor-parallel collectives: each all-reduce from
// the calibrated tp points; an all-gather or a reduce-scatter of the same
// buffer moves (n-1)/n of it per rank on a ring against an all-reduce's
// 2(n-1)/n, so it takes half an all-reduce's time.
double tp_collectives_s(const CalibrationProfile& p, const LayerOps& ops, int tp) {
  const double all_reduce = all_reduce_s(p, ops.tp_bytes_each, tp, "tp");
  return ops.tp_all_reduces * all_reduce +
         (ops.tp_all_gathers + ops.tp_reduce_scatters) * all_reduce / 2.0;
}

struct StageTimes {
  std::vector<double> forward_s, backward_s;  // per micro-batch, collectives included
};

}  // namespace

ExecutorJob executor_job(const core::Scenario& scenario, OptimizerKind optimizer) {
  ExecutorJob job;
  job.model = &scenario.model;
  job.plan = &scenario.plan;
  job.seq_len = scenario.training.seq_len;
  job.optimizer = optimizer;
  return job;
}

LayerShape executor_layer_shape(const ExecutorJob& job) {
  const auto& m = *job.model;
  return {m.hidden,
          m.heads,
          m.ffn_hidden,
          job.plan->tp,
          job.seq_len,
          job.plan->micro_batch,
          job.plan->sequence_parallel};
}

double all_reduce_s(const CalibrationProfile& p, double bytes, int ranks,
                    const std::string& group) {
  if (ranks <= 1 || bytes <= 0) return 0.0;
  const double ring = 2.0 * (ranks - 1) / ranks;
  std::vector<CollectivePoint> points;
  for (const std::string& g : {group, std::string("job")}) {
    for (const auto& c : p.all_reduce)
      if (c.group == g) points.push_back(c);
    if (!points.empty()) break;
  }
  if (points.empty()) return bytes * ring / p.memory_Bps;  // one-rank profile: a copy
  std::sort(points.begin(), points.end(),
            [](const CollectivePoint& a, const CollectivePoint& b) { return a.bytes < b.bytes; });
  double bus_Bps = points.front().bus_Bps;
  if (bytes >= points.back().bytes) {
    bus_Bps = points.back().bus_Bps;
  } else {
    for (std::size_t i = 1; i < points.size(); ++i) {
      if (bytes > points[i].bytes) continue;
      const auto& a = points[i - 1];
      const auto& b = points[i];
      const double f =
          bytes <= a.bytes ? 0.0 : std::log(bytes / a.bytes) / std::log(b.bytes / a.bytes);
      bus_Bps = std::exp(std::log(a.bus_Bps) + f * (std::log(b.bus_Bps) - std::log(a.bus_Bps)));
      break;
    }
  }
  return std::max(points.front().seconds, bytes * ring / bus_Bps);
}

double gemm_op_s(const CalibrationProfile& p, const GemmOp& op) {
  const double flops = 2.0 * op.m * op.n * static_cast<double>(op.k);
  for (const auto& g : p.gemm)
    if (g.m == op.m && g.n == op.n && g.k == op.k && g.a_transposed == op.a_transposed &&
        g.b_transposed == op.b_transposed)
      return flops / g.flops_per_s;
  const core::DeviceSpec d = device_from_profile(p);
  const double dim = std::min({op.m, op.n, op.k});
  return flops / (d.peak_bf16_flops_per_s * dim / (dim + d.efficiency.gemm_half_dim));
}

std::vector<GemmOp> iteration_gemm_ops(const ExecutorJob& job) {
  const LayerShape shape = executor_layer_shape(job);
  const core::ParallelPlan& plan = *job.plan;
  const int repeat =
      core::layers_on_stage(core::even_split(job.model->layers, plan.pp * plan.virtual_stages),
                            plan.pp, 0) *
      plan.micro_batches();
  std::vector<GemmOp> out;
  for (const auto& ops : {layer_forward_ops(shape), layer_backward_ops(shape),
                          layer_recompute_ops(shape, plan.recompute)})
    for (GemmOp g : ops.gemms) {
      g.count *= repeat;
      out.push_back(g);
    }
  return out;
}

IterationPrediction predict_iteration(const ExecutorJob& job, const CalibrationProfile& p) {
  const core::ParallelPlan& plan = *job.plan;
  const LayerShape shape = executor_layer_shape(job);
  const PassTime fwd = pass_time(layer_forward_ops(shape), shape, p);
  const PassTime bwd = pass_time(layer_backward_ops(shape), shape, p);
  // ZB-H1 runs the backward as two passes, B (input gradients) and W (weights).
  const bool split_backward = plan.schedule == core::Schedule::ZeroBubbleH1;
  // Recompute runs first in the input-gradient pass (B, or the whole backward).
  const LayerOps rops = layer_recompute_ops(shape, plan.recompute);
  const double recompute_s = pass_time(rops, shape, p).total();
  const double b_s =
      recompute_s +
      (split_backward ? pass_time(layer_backward_input_ops(shape), shape, p).total() : bwd.total());
  const double w_s =
      split_backward ? pass_time(layer_backward_weight_ops(shape), shape, p).total() : 0.0;
  const LayerOps fops = layer_forward_ops(shape), bops = layer_backward_ops(shape);
  const double tp_fwd_s = tp_collectives_s(p, fops, plan.tp);
  const double tp_bwd_s = tp_collectives_s(p, bops, plan.tp) + tp_collectives_s(p, rops, plan.tp);
  // A rank's activations: its token shard under sequence parallelism. The
  // data are made whole on the host (then its rows uploaded); the loss runs
  // on the rank's rows.
  const double local = static_cast<double>(shape.tokens_local()) * shape.hidden;
  const double activation_bytes = local * 4.0;
  const double wall = 1.0 / p.cpu_share;  // CPU time on a core -> wall time
  const double elements = static_cast<double>(shape.tokens()) * shape.hidden;
  const double data_s = elements * kernel_ns_per_element(p, kDataKernel) * 1e-9 * wall;
  const double loss_s = local * kernel_ns_per_element(p, kLossKernel) * 1e-9 * wall;
  // A send on the pipeline: one buffer one way, timed as a 2-rank all-reduce
  // (ring: two half-buffer steps, the same bytes per rank in two latencies).
  const double send_s = plan.pp > 1 ? all_reduce_s(p, activation_bytes, 2) : 0.0;

  const int pp = plan.pp, m = plan.micro_batches();
  const int virtual_stages = pp * plan.virtual_stages;
  const std::vector<int> layers = core::even_split(job.model->layers, virtual_stages);
  // Replay every stage's steps (core::stage_steps, as the executor runs
  // them): a step starts when its stage is free and all its inputs have
  // arrived (sends are queued, so the sender does not wait), then runs its
  // passes in order. Passes are tracked per virtual stage (chunk k of stage
  // s is k*pp + s).
  std::vector<std::vector<std::vector<core::PassOp>>> steps(static_cast<std::size_t>(pp));
  for (int s = 0; s < pp; ++s)
    steps[static_cast<std::size_t>(s)] =
        core::stage_steps(plan.schedule, pp, s, m, plan.virtual_stages);
  std::vector<std::vector<double>> fwd_done(static_cast<std::size_t>(virtual_stages),
                                            std::vector<double>(static_cast<std::size_t>(m), -1.0)),
      bwd_done = fwd_done;
  std::vector<std::size_t> next(steps.size(), 0);
  std::vector<double> clock(steps.size(), 0.0);
  // When `op`'s input is there (-1: not yet known).
  auto arrival = [&](int s, const core::PassOp& op) {
    const auto g = static_cast<std::size_t>(core::virtual_stage(pp, s, op.chunk));
    const auto mb = static_cast<std::size_t>(op.micro_batch);
    if (op.kind == core::PassKind::Forward && g > 0)
      return fwd_done[g - 1][mb] < 0 ? -1.0 : fwd_done[g - 1][mb] + send_s;
    if (op.kind == core::PassKind::Backward && g + 1 < static_cast<std::size_t>(virtual_stages))
      return bwd_done[g + 1][mb] < 0 ? -1.0 : bwd_done[g + 1][mb] + send_s;
    return 0.0;  // data, the loss gradient, or W: this stage's own earlier work
  };
  for (bool progress = true; progress;) {
    progress = false;
    for (int s = 0; s < pp; ++s) {
      const auto su = static_cast<std::size_t>(s);
      while (next[su] < steps[su].size()) {
        const auto& step = steps[su][next[su]];
        double ready = 0;
        bool waiting = false;
        for (const core::PassOp& op : step) {
          const double at = arrival(s, op);
          waiting = waiting || at < 0;
          ready = std::max(ready, at);
        }
        if (waiting) break;
        clock[su] = std::max(clock[su], ready);
        for (const core::PassOp& op : step) {
          const int g = core::virtual_stage(pp, s, op.chunk);
          const auto gu = static_cast<std::size_t>(g);
          const double n_layers = layers[gu];
          if (op.kind == core::PassKind::Forward) {
            clock[su] += n_layers * (fwd.total() + tp_fwd_s) + (g == 0 ? data_s : 0.0) +
                         (g == virtual_stages - 1 ? data_s + loss_s : 0.0);
            fwd_done[gu][static_cast<std::size_t>(op.micro_batch)] = clock[su];
          } else if (op.kind == core::PassKind::Backward) {
            clock[su] += n_layers * (b_s + tp_bwd_s);
            bwd_done[gu][static_cast<std::size_t>(op.micro_batch)] = clock[su];
          } else {
            clock[su] += n_layers * w_s;
          }
        }
        ++next[su];
        progress = true;
      }
    }
  }
  const double layer_params = static_cast<double>(layer_parameters(shape));
  const bool sharded =
      plan.optimizer_sharding == core::OptimizerSharding::Distributed && plan.dp > 1;
  const double opt_ns =
      kernel_ns_per_element(p, job.optimizer == OptimizerKind::Adam ? kAdamKernel : kSgdKernel);
  IterationPrediction out;
  double finish_s = 0, worst_dp_s = 0, worst_opt_s = 0, worst_pipe_s = 0;
  for (int s = 0; s < pp; ++s) {
    const double stage_layers = core::layers_on_stage(layers, pp, s);
    const double grad_bytes = stage_layers * layer_params * 4.0;
    const double zero_s = grad_bytes / p.memory_Bps * wall;
    double dp_s = 0;
    if (plan.dp > 1 && !sharded) {
      const double bucket = static_cast<double>(job.dp_bucket_bytes);
      const double full = std::floor(grad_bytes / bucket);
      dp_s = full * all_reduce_s(p, bucket, plan.dp, "dp") +
             all_reduce_s(p, grad_bytes - full * bucket, plan.dp, "dp");
    }
    if (sharded) {
      // Buckets of whole tensors (hw/model/dp_shards.hpp), each reduce-scattered
      // and all-gathered: half an all-reduce of its bytes each.
      std::vector<std::size_t> sizes;
      for (int l = 0; l < static_cast<int>(stage_layers); ++l)
        for (const std::size_t n : layer_tensor_sizes(shape)) sizes.push_back(n);
      for (const ShardBucket& b :
           shard_buckets(sizes, plan.dp, std::max<std::size_t>(1, job.dp_bucket_bytes / 4)))
        dp_s += all_reduce_s(p, static_cast<double>(b.block) * plan.dp * 4.0, plan.dp, "dp");
    }
    // Gradients into the buckets and back (or weights back): 2 reads + 2 writes.
    if (plan.dp > 1) dp_s += 4.0 * grad_bytes / p.memory_Bps * wall;
    // The distributed optimizer updates this rank's 1/dp of the weights.
    const double updated =
        sharded ? stage_layers * layer_params / plan.dp : stage_layers * layer_params;
    const double opt_s = updated * opt_ns * 1e-9 * wall;
    finish_s = std::max(finish_s, zero_s + clock[static_cast<std::size_t>(s)] + dp_s + opt_s);
    worst_pipe_s = std::max(worst_pipe_s, clock[static_cast<std::size_t>(s)]);
    worst_dp_s = std::max(worst_dp_s, dp_s);
    worst_opt_s = std::max(worst_opt_s, opt_s);
  }
  // The loss is summed over the job: every rank waits for the last one.
  finish_s += all_reduce_s(p, sizeof(double), plan.gpus());
  out.iteration_ns = to_ns(finish_s);
  out.layer_forward_ns = to_ns(fwd.total());
  out.layer_backward_ns = to_ns(bwd.total());
  out.tp_per_layer_ns = to_ns(tp_fwd_s + tp_bwd_s);
  out.pipeline_ns = to_ns(worst_pipe_s);
  out.dp_ns = to_ns(worst_dp_s);
  out.optimizer_ns = to_ns(worst_opt_s);
  return out;
}

core::WorkProfile executor_work_profile(const ExecutorJob& job, const CalibrationProfile& p) {
  const LayerShape shape = executor_layer_shape(job);
  const LayerOps fops = layer_forward_ops(shape), bops = layer_backward_ops(shape);
  const PassTime fwd = pass_time(fops, shape, p);
  const PassTime bwd = pass_time(bops, shape, p);
  core::WorkProfile w;
  w.seq_len = job.seq_len;
  w.layer.forward_ns = to_ns(fwd.total());
  w.layer.backward_ns = to_ns(bwd.total());
  w.layer.backward_input_ns = to_ns(pass_time(layer_backward_input_ops(shape), shape, p).total());
  for (const GemmOp& g : fops.gemms) w.layer.forward_flops += g.flops();
  const LayerOps rops = layer_recompute_ops(shape, job.plan->recompute);
  w.layer.recompute_ns = to_ns(pass_time(rops, shape, p).total());
  // Forward, and backward with what recompute reruns; gathers and scatters
  // under sequence parallelism.
  const double bytes = fops.tp_bytes_each;
  auto calls = [](int count) { return static_cast<double>(count); };
  if (job.plan->sequence_parallel) {
    using core::CollectiveKind;
    w.layer.tp_forward = {CollectiveKind::AllGather, bytes, calls(fops.tp_all_gathers)};
    w.layer.tp_forward_scatter = {CollectiveKind::ReduceScatter, bytes,
                                  calls(fops.tp_reduce_scatters)};
    w.layer.tp_backward = {CollectiveKind::AllGather, bytes,
                           calls(bops.tp_all_gathers + rops.tp_all_gathers)};
    w.layer.tp_backward_scatter = {CollectiveKind::ReduceScatter, bytes,
                                   calls(bops.tp_reduce_scatters + rops.tp_reduce_scatters)};
  } else {
    w.layer.tp_forward = {core::CollectiveKind::AllReduce, bytes, calls(fops.tp_all_reduces)};
    w.layer.tp_backward = {core::CollectiveKind::AllReduce, bytes,
                           calls(bops.tp_all_reduces + rops.tp_all_reduces)};
  }
  w.layer.gemm_forward_ns = to_ns(fwd.gemm_s);
  w.layer.attention_forward_ns = to_ns(fwd.attention_s);
  w.layer.attention_backward_ns = to_ns(bwd.attention_s);
  w.layer.elementwise_forward_ns = to_ns(fwd.elementwise_s);
  const double elements = static_cast<double>(shape.tokens()) * shape.hidden;
  const double wall = 1.0 / p.cpu_share;
  w.embedding_forward_ns = to_ns(elements * kernel_ns_per_element(p, kDataKernel) * 1e-9 * wall);
  // The loss and the pipeline's messages cover this rank's token shard.
  const double local = static_cast<double>(shape.tokens_local()) * shape.hidden;
  w.head_forward_ns = to_ns((elements * kernel_ns_per_element(p, kDataKernel) +
                             local * kernel_ns_per_element(p, kLossKernel)) *
                            1e-9 * wall);
  w.pp_activation_bytes = local * 4.0;
  w.params_per_gpu_layer = static_cast<double>(layer_parameters(shape));
  w.grad_bytes_per_param = 4.0;  // fp32 gradients
  w.optimizer_s_per_param =
      kernel_ns_per_element(p, job.optimizer == OptimizerKind::Adam ? kAdamKernel : kSgdKernel) *
      1e-9 * wall;
  return w;
}

}  // namespace parashift::hw
