// Every valid plan for one model, cluster size and batch: the planner's
// search space. Each plan it yields passes ParallelPlan::problems(); the
// checks are the same rules written allocation-free.
//
// Candidates per dimension (a pinned dimension takes only its pinned value,
// still checked against problems()' rules):
//   tp  divisors of heads (and of ffn_hidden, kv_heads-compatible) up to
//       gpus_per_node: tensor parallelism stays inside a node;
//   cp  1, 2, 4, ... up to max_cp, each with seq_len % (2 cp) == 0;
//   pp  divisors of gpus / (tp cp) with pp <= layers (uneven stages allowed);
//   dp  gpus / (tp pp cp), dividing global_batch / micro_batch;
//   micro_batch  divisors of global_batch / dp;
//   virtual_stages  1, or v > 1 when layers % (pp v) == 0 (interleaved only);
//   schedule  gpipe, 1f1b, zb_h1 with v == 1; interleaved_1f1b with v > 1
//       and micro-batches % pp == 0 (the estimate models all four);
//   recompute none / selective / full; sequence_parallel off, and on when
//   tp > 1; optimizer_sharding none / distributed / fsdp.
// Three canonical-form rules drop plans whose cost the estimate cannot tell
// apart from a plan already yielded (unless the user pins that dimension):
//   pp == 1: only 1f1b and v == 1 (no pipeline: the schedule is moot);
//   dp == 1: only optimizer_sharding none (nothing to shard across);
//   interleaved_1f1b only with v > 1 (v == 1 is plain 1f1b).
#pragma once

#include <cstdint>
#include <vector>

#include "core/model_spec.hpp"
#include "core/parallel_plan.hpp"
#include "core/planner/plan_pins.hpp"

namespace parashift::core {

struct PlanSpaceInput {
  int gpus = 0;
  int gpus_per_node = 8;
  int global_batch = 0;
  int seq_len = 0;
  Precision precision = Precision::Bf16;
  RankOrder order = RankOrder::TpCpDpPp;
  PlanPins pins;
  int max_cp = 16;  // largest context-parallel degree tried when cp is not pinned
};

class PlanSpace {
 public:
  PlanSpace(const ModelSpec& model, const PlanSpaceInput& input);

  /// Calls visit(const ParallelPlan&) once per valid plan, in a fixed order.
  /// Plans sharing (tp, cp, micro_batch, recompute, sequence_parallel) come
  /// in one run, so a caller may cache what depends only on those.
  /// Allocation-free.
  template <typename Visit>
  void for_each(Visit&& visit) const;

  /// The number of plans for_each yields.
  std::int64_t count() const;

 private:
  struct Staging {
    int virtual_stages = 1;
    Schedule schedule = Schedule::OneFOneB;
  };
  bool staging_ok(const ParallelPlan& plan, const Staging& staging) const;
  bool sharding_ok(const ParallelPlan& plan, OptimizerSharding sharding) const;
  /// The node-local shard degree of an HSDP variant of an FSDP plan (the
  /// data-parallel ranks one node holds), 0 when it has none.
  int node_shard(const ParallelPlan& plan) const;

  int layers_ = 0;
  PlanSpaceInput in_;
  std::vector<int> tp_;
  std::vector<int> cp_;
  std::vector<int> pp_;  // candidates before the per-(tp, cp) divisibility check
  std::vector<int> micro_batch_;
  std::vector<Recompute> recompute_;
  std::vector<bool> sequence_parallel_;
  std::vector<Staging> staging_;
  std::vector<OptimizerSharding> sharding_;
};

template <typename Visit>
void PlanSpace::for_each(Visit&& visit) const {
  ParallelPlan plan;
  plan.global_batch = in_.global_batch;
  plan.precision = in_.precision;
  plan.order = in_.order;
  for (const int tp : tp_) {
    plan.tp = tp;
    for (const int cp : cp_) {
      plan.cp = cp;
      if (in_.gpus % (tp * cp) != 0) continue;
      const int rest = in_.gpus / (tp * cp);
      for (const int mb : micro_batch_) {
        plan.micro_batch = mb;
        for (const Recompute rc : recompute_) {
          plan.recompute = rc;
          for (const bool sp : sequence_parallel_) {
            if (sp && tp == 1) continue;
            plan.sequence_parallel = sp;
            for (const int pp : pp_) {
              if (rest % pp != 0) continue;
              const int dp = rest / pp;
              if (in_.pins.dp && *in_.pins.dp != dp) continue;
              if (in_.global_batch % (dp * mb) != 0) continue;
              plan.pp = pp;
              plan.dp = dp;
              for (const Staging& staging : staging_) {
                if (!staging_ok(plan, staging)) continue;
                plan.virtual_stages = staging.virtual_stages;
                plan.schedule = staging.schedule;
                for (const OptimizerSharding os : sharding_) {
                  if (!sharding_ok(plan, os)) continue;
                  plan.optimizer_sharding = os;
                  visit(static_cast<const ParallelPlan&>(plan));
                  // FSDP across nodes: also sharded within a node, replicated
                  // across (HSDP), when a node holds several data-parallel ranks.
                  if (const int shard = node_shard(plan); shard > 0) {
                    plan.dp_shard = shard;
                    visit(static_cast<const ParallelPlan&>(plan));
                    plan.dp_shard = 0;
                  }
                }
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace parashift::core
