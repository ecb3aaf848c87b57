#include "core/cost/memory.hpp"

#include <algorithm>

namespace parashift::core {

namespace {

// Mixed-precision Adam (ZeRO paper, section 3.1): 2 B BF16 weights, 2 B BF16
// gradients and 12 B of FP32 master weights, momentum and variance.
constexpr double kWeightBytes = 2.0;
constexpr double kGradientBytes = 2.0;
constexpr double kOptimizerBytes = 12.0;
// FSDP / ZeRO-3 holds two layers' parameters unsharded at a time (the one
// computing and the one prefetched) and one layer's unsharded gradients
// until their reduce-scatter (PyTorch FSDP's default forward/backward
// prefetch of one module; DeepSpeed's prefetch bucket of a similar size).
constexpr double kFsdpGatheredLayers = 2.0;
constexpr double kFsdpUnshardedGradientLayers = 1.0;

int layers_on_first_stage(const ModelSpec& model, const ParallelPlan& plan) {
  const int chunks = plan.pp * plan.virtual_stages;
  const int per_chunk = (model.layers + chunks - 1) / chunks;
  return per_chunk * plan.virtual_stages;
}

}  // namespace

ActivationTerms activation_terms(const ModelSpec& model) {
  // Korthikanti et al. 2022, section 4.1, in units of s*b*h bytes (BF16),
  // generalised to grouped-query attention (K and V of kv_heads, g = kv/a)
  // and to the MLP's shape (f = ffn_hidden):
  //   layer-norm inputs 2 + 2; QKV GEMM input 2; fc1 input 2; the two
  //   dropout masks 1 + 1                                     (not split by TP)
  //   Q 2, K 2g, V 2g, attention context 2; MLP activations: GELU keeps the
  //   fc1 output and the activation output (2f/h each), SwiGLU the gate and
  //   up outputs and their product (2f/h each)                (split by TP)
  //   unfused attention: scores, softmax and dropout output 5*a*s/h
  //   (fused kernels keep only the FP32 log-sum-exp, 4*a/h)    (split by TP)
  // GPT-3 (g = 1, f = 4h, GELU): 10 + 24 + 5as/h = Korthikanti's 34 + 5as/h.
  const double h = model.hidden;
  const double g = static_cast<double>(model.kv_heads) / model.heads;
  const double f_over_h = static_cast<double>(model.ffn_hidden) / h;
  const double mlp = (model.ffn_kind == FfnKind::SwiGlu ? 6.0 : 4.0) * f_over_h;
  ActivationTerms t;
  t.unsplit_per_sbh = 10.0;
  t.split_per_sbh = 2.0 + 4.0 * g + 2.0 + mlp;
  return t;
}

double layer_activation_bytes(const ModelSpec& model, const ParallelPlan& plan, int seq_len) {
  // Context parallelism splits the sequence; sequence parallelism splits the
  // TP-unsplit terms too.
  const double s = static_cast<double>(seq_len) / plan.cp;
  const double b = plan.micro_batch;
  const double h = model.hidden;
  const double a = model.heads;
  const double t = plan.tp;
  const double sbh = s * b * h;
  const ActivationTerms terms = activation_terms(model);
  const double unsplit = plan.sequence_parallel ? terms.unsplit_per_sbh / t : terms.unsplit_per_sbh;
  const double scores = model.attention == AttentionKernel::Unfused ? 5.0 * a * s / h : 4.0 * a / h;
  const double kept = sbh * (unsplit + (terms.split_per_sbh + scores) / t);
  switch (plan.recompute) {
    case Recompute::Full: {
      // A recomputed layer keeps its input only; with recompute_layers the
      // others keep everything: the mean over the stage's layers.
      const double share = plan.full_recompute_share(model.layers);
      return share * 2.0 * sbh / (plan.sequence_parallel ? t : 1.0) + (1.0 - share) * kept;
    }
    case Recompute::Selective:
      return sbh * (unsplit + terms.split_per_sbh / t);  // the attention core is recomputed
    case Recompute::None:
      break;
  }
  return kept;
}

double in_flight_micro_batches(const ParallelPlan& plan) {
  const double p = plan.pp;
  const double m = plan.global_batch / (plan.dp * plan.micro_batch);
  switch (plan.schedule) {
    case Schedule::GPipe:
      return std::max(1.0, m);
    case Schedule::Interleaved1F1B: {
      const double v = plan.virtual_stages;
      return std::min(std::max(1.0, m), p * (1.0 + (p - 1.0) / (p * v)));
    }
    case Schedule::OneFOneB:
    case Schedule::ZeroBubbleH1:
      break;
  }
  return std::min(std::max(1.0, m), p);
}

double resident_bytes_per_param(const ParallelPlan& plan) {
  const double dp = plan.shard_degree();  // the shard group under HSDP
  switch (plan.optimizer_sharding) {
    case OptimizerSharding::None:
      break;
    case OptimizerSharding::Distributed:
      return kWeightBytes + kGradientBytes + kOptimizerBytes / dp;
    case OptimizerSharding::Fsdp:
      return (kWeightBytes + kGradientBytes + kOptimizerBytes) / dp;
  }
  return kWeightBytes + kGradientBytes + kOptimizerBytes;
}

MemoryEstimate peak_memory(const ModelSpec& model, const ParallelPlan& plan, int seq_len) {
  const double layers = layers_on_first_stage(model, plan);
  // Stage 0 holds its layers and the (vocab-parallel) input embedding.
  const double layer_params = model.layer_params() / plan.tp;
  const double params =
      layers * layer_params + model.vocab * static_cast<double>(model.hidden) / plan.tp;
  const double dp = plan.shard_degree();  // the shard group under HSDP
  MemoryEstimate m;
  m.weights_bytes = kWeightBytes * params;
  m.gradients_bytes = kGradientBytes * params;
  m.optimizer_bytes = kOptimizerBytes * params;
  switch (plan.optimizer_sharding) {
    case OptimizerSharding::None:
      break;
    case OptimizerSharding::Distributed:
      m.optimizer_bytes /= dp;
      break;
    case OptimizerSharding::Fsdp:
      // Sharded at rest; gathered a layer or two at a time (see above), every
      // micro-batch: the same schedule estimate_iteration() charges.
      m.weights_bytes = m.weights_bytes / dp + kFsdpGatheredLayers * kWeightBytes * layer_params;
      m.gradients_bytes =
          m.gradients_bytes / dp + kFsdpUnshardedGradientLayers * kGradientBytes * layer_params;
      m.optimizer_bytes /= dp;
      break;
  }
  // in_flight counts micro-batches over the stage's whole layer set (for
  // interleaving, Korthikanti's L*(1 + (p-1)/(p*v)) total spread over p).
  m.activations_bytes =
      layer_activation_bytes(model, plan, seq_len) * layers * in_flight_micro_batches(plan);
  return m;
}

}  // namespace parashift::core
