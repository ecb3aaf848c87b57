// The software options a published run's framework implies (see
// framework_defaults.hpp).
#include "core/validation/framework_defaults.hpp"

#include <string_view>

#include "core/cost/estimate.hpp"
#include "core/validation/text_match.hpp"

namespace parashift::core {

using text::has;
using text::lower;
using text::release_year;

namespace {

// HSDP ("hybrid", "HSDP"): FSDP sharded over a "shard group N", else over
// the data-parallel ranks of one node (fms-fsdp's "sharded within each
// 8-GPU node"), replicated across.
void apply_hybrid_sharding(const std::string& sharding, PublishedRun& run) {
  ParallelPlan& p = run.plan;
  if (p.optimizer_sharding != OptimizerSharding::Fsdp) return;
  if (!has(sharding, "hsdp") && !has(sharding, "hybrid")) return;
  int shard = group_placement(p, run.gpus_per_node).dp_per_node;
  constexpr std::string_view kKey = "shard group";
  if (const auto at = sharding.find(kKey); at != std::string::npos) {
    if (auto n = leading_number(sharding.substr(at + kKey.size())); n && *n >= 1 && *n <= p.dp)
      shard = static_cast<int>(*n);
  }
  if (shard < 1 || shard >= p.dp || p.dp % shard != 0) return;
  p.dp_shard = shard;
  run.defaults.push_back("HSDP: sharded over " + std::to_string(shard) + " of dp " +
                         std::to_string(p.dp));
}

}  // namespace

void apply_framework(const RowCells& row, PublishedRun& run) {
  const std::string framework = lower(row.framework);
  const std::string all =
      framework + " " + lower(row.notes) + " " + lower(row.sharding) + " " + lower(row.recompute);
  if (has(framework, "megatron") || has(framework, "nemo")) {
    // A release of 2022 or before ("Megatron-LM (2021)", "NeMo Megatron
    // 22.06"): FlashAttention reached Megatron and NeMo in 2023.
    if (const int year = release_year(framework); year > 0 && year <= 2022) {
      run.model.attention = AttentionKernel::Unfused;
      run.options.overlap_grad_reduce = false;
      run.options.overlap_param_gather = false;
      run.defaults.push_back("framework " + std::to_string(year) +
                             ": unfused attention, gradient all-reduce after backward");
    }
  }
  if ((has(framework, "jax") || has(framework, "pax") || has(framework, "maxtext")) &&
      !has(lower(row.precision), "transformer engine")) {
    // XLA ran attention unfused until "as of 2/6/2024, CuDNN flash attention
    // was enabled by default via XLA" (JAX-Toolbox Pax README, commit
    // f13e247c); a release of 2023 without Transformer Engine had none.
    if (const int year = release_year(framework); year > 0 && year <= 2023) {
      run.model.attention = AttentionKernel::Unfused;
      run.defaults.push_back("XLA " + std::to_string(year) +
                             " without Transformer Engine: unfused attention");
    }
  }
  if (has(framework, "kempnerforge")) {
    // Its FSDP2 policy (kempnerforge/distributed/parallel.py, default_mp_policy,
    // since its first commit): bf16 parameters, gradients reduced in FP32.
    run.options.grad_reduce_bytes = 4.0;
  }
  if (has(framework, "torchtitan")) {
    run.options.grad_reduce_bytes = 4.0;  // FSDP2 mixed precision reduces in FP32
    if (run.plan.optimizer_sharding == OptimizerSharding::Fsdp && run.plan.pp > 1) {
      // torchtitan's default reshard_after_forward policy is "not pp_enabled":
      // with pipelining FSDP2 keeps each stage's parameters gathered across
      // micro-batches (one gather, one reduce-scatter per iteration, full
      // weights and gradients resident): the distributed optimizer's costs.
      run.plan.optimizer_sharding = OptimizerSharding::Distributed;
      run.defaults.push_back("torchtitan FSDP with pp>1: parameters kept gathered (as ZeRO-1)");
    }
    if (run.plan.recompute == Recompute::Selective) {
      run.options.selective = SelectiveRecompute::PerOp;
    }
  }
  if (has(framework, "eager")) {
    run.options.elementwise_traffic = 3.0;
    run.defaults.push_back("eager framework: unfused element-wise ops (3x traffic)");
  }
  if (has(all, "per-op") || has(all, "per op")) run.options.selective = SelectiveRecompute::PerOp;
  if (has(framework, "nemo") && run.plan.tp > 1) {
    // NeMo's performance recipes turn on Transformer Engine's userbuffer
    // TP overlap (ub_tp_comm_overlap) whenever tp > 1.
    run.options.tp_comm_overlap = true;
    run.defaults.push_back("NeMo: TP communication overlap");
  }
  if (has(all, "asynctp") || has(all, "async tp") || has(all, "async-tp") ||
      has(all, "tp-comm-overlap") || has(all, "tp_comm_overlap")) {
    run.options.tp_comm_overlap = true;
  }
  // Last: a rule above may have turned FSDP into something HSDP does not shard.
  apply_hybrid_sharding(lower(row.sharding), run);
}

}  // namespace parashift::core
