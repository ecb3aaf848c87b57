#include "core/cost/memory.hpp"

#include <algorithm>

namespace parashift::core {

namespace {

// Mixed-precision Adam (ZeRO paper, section 3.1): 2 B BF16 weights, 2 B BF16
// gradients and 12 B of FP32 master weights, momentum and variance.
constexpr double kWeightBytes = 2.0;
constexpr double kGradientBytes = 2.0;
constexpr double kOptimizerBytes = 12.0;

int layers_on_first_stage(const ModelSpec& model, const ParallelPlan& plan) {
  const int chunks = plan.pp * plan.virtual_stages;
  const int per_chunk = (model.layers + chunks - 1) / chunks;
  return per_chunk * plan.virtual_stages;
}

}  // namespace

double layer_activation_bytes(const ModelSpec& model, const ParallelPlan& plan, int seq_len) {
  // Korthikanti et al. 2022, section 4: per layer s*b*h*(34 + 5*a*s/h) bytes
  // without parallelism; 10 of the 34 (norm inputs, dropout masks, residual)
  // are split by TP only with sequence parallelism. Context parallelism
  // splits the sequence.
  const double s = static_cast<double>(seq_len) / plan.cp;
  const double b = plan.micro_batch;
  const double h = model.hidden;
  const double a = model.heads;
  const double t = plan.tp;
  const double sbh = s * b * h;
  const double unsplit = plan.sequence_parallel ? 10.0 / t : 10.0;
  switch (plan.recompute) {
    case Recompute::Full:
      return 2.0 * sbh / (plan.sequence_parallel ? t : 1.0);  // the layer input only
    case Recompute::Selective:
      return sbh * (unsplit + 24.0 / t);  // the 5as/h attention-core term is recomputed
    case Recompute::None:
      break;
  }
  return sbh * (unsplit + 24.0 / t + 5.0 * a * s / (h * t));
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

MemoryEstimate peak_memory(const ModelSpec& model, const ParallelPlan& plan, int seq_len) {
  const double layers = layers_on_first_stage(model, plan);
  // Stage 0 holds its layers and the (vocab-parallel) input embedding.
  const double params =
      (layers * model.layer_params() + model.vocab * static_cast<double>(model.hidden)) / plan.tp;
  const double dp = plan.dp;
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
      m.weights_bytes /= dp;
      m.gradients_bytes /= dp;
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
