// How one training job is split across GPUs.
#pragma once

#include <string>
#include <vector>

#include "core/compress/compression_spec.hpp"
#include "core/model_spec.hpp"

namespace parashift::core {

enum class Schedule { GPipe, OneFOneB, Interleaved1F1B, ZeroBubbleH1 };
enum class Recompute { None, Selective, Full };
enum class OptimizerSharding { None, Distributed, Fsdp };  // none / ZeRO-1 / ZeRO-3
enum class Precision { Bf16, Fp8 };
/// How the data-parallel gradient sync runs (core/cost/grad_sync.hpp):
/// flat, one all-reduce over the whole group; hierarchical, a reduce-scatter
/// inside each node at full precision, an all-reduce of the shards between
/// nodes (compressed when the plan says so), an all-gather inside the node;
/// delayed, the hierarchical sync whose inter-node all-reduce and node
/// all-gather run during the next iteration: each update applies the
/// previous iteration's mean gradient (staleness exactly one iteration; the
/// first iteration applies none).
enum class SyncMode { Flat, Hierarchical, Delayed };
/// How global ranks (and so GPUs: rank r runs on GPU r) are numbered from
/// the parallel coordinates, tp fastest (core/rank_layout.hpp). tp-cp-dp-pp
/// is Megatron's default: a pipeline stage of every replica sits on
/// consecutive GPUs. tp-cp-pp-dp is Megatron's --use-tp-pp-dp-mapping and the
/// Llama 3 order: each replica's whole pipeline sits on consecutive GPUs, so
/// a rack failure takes whole replicas instead of one stage of many.
enum class RankOrder { TpCpDpPp, TpCpPpDp };

struct ParallelPlan {
  int tp = 1;              // tensor parallel
  int pp = 1;              // pipeline parallel
  int dp = 1;              // data parallel
  int cp = 1;              // context parallel
  int virtual_stages = 1;  // model chunks per pipeline rank (interleaving)
  int micro_batch = 1;     // sequences per micro-batch
  int global_batch = 1;    // sequences per iteration
  Schedule schedule = Schedule::OneFOneB;
  Recompute recompute = Recompute::None;
  /// With recompute full: how many layers of each (virtual) stage are
  /// recomputed, the rest keeping their activations (Megatron's
  /// --recompute-method block --recompute-num-layers; fms-fsdp's fraction of
  /// checkpointed blocks). 0: every layer.
  int recompute_layers = 0;
  bool sequence_parallel = false;
  OptimizerSharding optimizer_sharding = OptimizerSharding::None;
  /// With FSDP: the data-parallel ranks that shard parameters, gradients and
  /// optimizer state (HSDP: torchtitan's data_parallel_shard_degree, PyTorch
  /// FSDP's HYBRID_SHARD, MaxText's ici_fsdp_parallelism); the dp / dp_shard
  /// copies of each shard all-reduce its gradients once an iteration.
  /// 0: the whole data-parallel group.
  int dp_shard = 0;
  Precision precision = Precision::Bf16;
  SyncMode sync = SyncMode::Flat;
  RankOrder order = RankOrder::TpCpDpPp;
  /// The gradient compressor of the data-parallel sync: of the whole
  /// all-reduce (flat) or of its inter-node step (hierarchical).
  CompressionSpec compression;

  int gpus() const { return tp * pp * dp * cp; }
  /// The data-parallel ranks each parameter's shards spread over: dp_shard
  /// under HSDP, dp under FSDP and the distributed optimizer, 1 without
  /// sharding (core/cost/fsdp.hpp, core/cost/memory.cpp).
  int shard_degree() const;
  /// The share of a stage's layers recomputed in full: 0 without full
  /// recompute, 1 with every layer, recompute_layers over the (virtual)
  /// stage's share of `model_layers` otherwise (at most 1). The one reading
  /// of recompute_layers for time (core/cost/work_profile.cpp) and memory
  /// (core/cost/memory.cpp).
  double full_recompute_share(int model_layers) const;
  /// Micro-batches each data-parallel replica runs per iteration.
  int micro_batches() const { return global_batch / (dp * micro_batch); }
  /// Whether replicas may run different numbers of micro-batches (a
  /// re-balance): not under FSDP over dp > 1, where every pass gathers its
  /// layers over the whole data-parallel group, so every replica must run
  /// the same passes.
  bool replicas_may_differ() const {
    return optimizer_sharding != OptimizerSharding::Fsdp || dp < 2;
  }

  /// Every reason this plan cannot run `model` with `seq_len` on `gpu_count`
  /// GPUs, as "field: reason" lines; empty when the plan is valid.
  std::vector<std::string> problems(const ModelSpec& model, int seq_len, int gpu_count) const;
  /// Throws InputError with the first problem (prefixed "plan.").
  void validate(const ModelSpec& model, int seq_len, int gpu_count) const;
  /// Compact label, e.g. "tp8 pp8 dp16 cp1 v1 mb1 1f1b sel sp dist bf16".
  std::string label() const;
};

const char* to_string(Schedule value);
const char* to_string(Recompute value);
const char* to_string(OptimizerSharding value);
const char* to_string(Precision value);
const char* to_string(SyncMode value);
const char* to_string(RankOrder value);
// Each parser throws InputError "expected one of ..., found '...'".
Schedule parse_schedule(const std::string& text);
Recompute parse_recompute(const std::string& text);
OptimizerSharding parse_optimizer_sharding(const std::string& text);
Precision parse_precision(const std::string& text);
SyncMode parse_sync_mode(const std::string& text);
RankOrder parse_rank_order(const std::string& text);

}  // namespace parashift::core
