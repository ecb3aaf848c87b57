// What switching a running job from one parallel plan to another costs (a
// live re-plan between iterations). One source for the policy's estimate
// (core/controller/replan_policy) and the simulator's timing of the switch
// (sim/sim_backend), each with its own view of the network:
//
//   - a change of tp, pp, dp, cp, interleaving or optimizer sharding
//     re-shards the model state: every GPU fetches the weights and
//     optimizer state its new shard holds (gradients start at zero after
//     the optimizer step; activations are rebuilt by the next iteration),
//     all GPUs at once, each over its own NIC, counted as if none of it
//     were already local (an upper bound: a GPU whose shard survives keeps
//     it), and the job's communicators are rebuilt;
//   - a change of only the micro-batch size, schedule, recompute, sequence
//     parallelism, sync mode or compressor moves no state and keeps the
//     groups: it costs nothing beyond the iteration boundary;
//   - the pipeline drain and refill are already in every iteration (each
//     schedule flushes before the optimizer step), so a switch between
//     iterations adds none.
#pragma once

#include "core/model_spec.hpp"
#include "core/parallel_plan.hpp"
#include "core/units.hpp"

namespace parashift::core {

/// One data-parallel group's communicator made anew in another ring order
/// (core::ReorderDirective) among live ranks, as ncclCommSplit does: no
/// process restarts and no state moves, so the cost is NCCL's init between
/// iterations. Published init timings: a 2-rank split 0.15 s (NVIDIA/nccl
/// issue #1605), an 8-GPU DGX B200 communicator bootstrap 0.03-0.84 s +
/// topology 1.10 s + connections 0.39 s once kernels are loaded (issue
/// #1646). One second, charged by the simulator and assumed by the
/// `aggregation` module (its rebuild_s knob).
inline constexpr TimeNs kRingRebuildNs = kNsPerS;

struct ReplanCost {
  double bytes_per_gpu = 0;  // state each GPU fetches
  TimeNs move_ns = 0;        // the fetch, all GPUs at once
  TimeNs rebuild_ns = 0;     // communicators rebuilt
  TimeNs total_ns() const { return move_ns + rebuild_ns; }
};

/// Whether `from` -> `to` changes how the model state is sharded.
bool replan_reshards(const ParallelPlan& from, const ParallelPlan& to);

/// The cost of `from` -> `to` when one GPU's fetch takes
/// `fetch_ns(bytes)` and rebuilding the communicators `rebuild_ns`.
template <class FetchNs>
ReplanCost replan_cost(const ModelSpec& model, const ParallelPlan& from, const ParallelPlan& to,
                       int seq_len, TimeNs rebuild_ns, FetchNs fetch_ns);

/// Weights and optimizer state one GPU holds under `plan` (the most loaded
/// rank's, core/snapshot/rank_state.hpp).
double replan_state_bytes(const ModelSpec& model, const ParallelPlan& plan, int seq_len);

template <class FetchNs>
ReplanCost replan_cost(const ModelSpec& model, const ParallelPlan& from, const ParallelPlan& to,
                       int seq_len, TimeNs rebuild_ns, FetchNs fetch_ns) {
  ReplanCost cost;
  if (!replan_reshards(from, to)) return cost;
  cost.bytes_per_gpu = replan_state_bytes(model, to, seq_len);
  cost.move_ns = fetch_ns(cost.bytes_per_gpu);
  cost.rebuild_ns = rebuild_ns;
  return cost;
}

}  // namespace parashift::core
