// FSDP / ZeRO-3 as it runs (Rajbhandari et al. 2020, section 5; PyTorch
// FSDP, Zhao et al. 2023): every micro-batch gathers each layer's parameters
// before its forward and again before its backward (resharded after the
// forward), and reduce-scatters its gradients after its backward. Prefetch
// runs layer l+1's gather under layer l's compute, so per layer only what
// exceeds that compute is exposed, and the compute it overlaps runs slower
// (core::overlapped_exposed_ns), plus the first gather of the forward and
// the last reduce-scatter of the backward. The embedding (and head)
// parameters are gathered like one more layer. The one source of these
// terms for the cost model (estimate.cpp, per stage) and the simulator
// (sim/iteration.cpp, per pass); peak_memory() holds the same schedule's
// working set.
#pragma once

#include "core/parallel_plan.hpp"
#include "core/units.hpp"

namespace parashift::core {

/// One data-parallel group's FSDP collectives, each a single call.
struct FsdpComm {
  TimeNs gather_ns = 0;         // one layer's parameters, all-gathered
  TimeNs scatter_ns = 0;        // one layer's gradients, reduce-scattered
  TimeNs other_gather_ns = 0;   // the embedding and head parameters the pass holds (0: none)
  TimeNs other_scatter_ns = 0;  // ... and their gradients
};

/// Whom a data-parallel group's FSDP collectives span. Under HSDP
/// (plan.dp_shard < dp) each run of dp_shard consecutive data-parallel ranks
/// shards the parameters and gathers and reduce-scatters among itself; the
/// ranks holding the same shard in the dp / dp_shard groups (stride
/// dp_shard) all-reduce its gradients once an iteration, overlapping the
/// last backward like a bucketed all-reduce (PyTorch FSDP's HYBRID_SHARD).
/// Per node: `dp_per_node` consecutive data-parallel ranks share one.
struct FsdpGroups {
  int shard = 1;             // ranks of a shard group
  int shard_per_node = 1;    // ... of them on one node
  int replicas = 1;          // copies of each shard (1: plain FSDP)
  int replica_per_node = 1;  // ... of them on one node
};
FsdpGroups fsdp_groups(const ParallelPlan& plan, int dp_per_node);

struct ClusterView;
/// The cost model's FSDP collectives of one group: each layer's `layer_params`
/// and the `other_params` (embedding, head) gathered in BF16 and their
/// gradients reduce-scattered at `grad_bytes_per_param`, over the shard group.
FsdpComm fsdp_comm_of(const ClusterView& cluster, const FsdpGroups& groups, double layer_params,
                      double other_params, double grad_bytes_per_param);
/// The replicas' all-reduce of the shard of `params` gradients a GPU holds
/// (0 without replicas).
TimeNs hsdp_replica_sync_ns(const ClusterView& cluster, const FsdpGroups& groups, double params,
                            double grad_bytes_per_param);

/// One GPU's share of the embedding and output-head parameters held by a
/// (virtual) stage that is the first and/or the last: tied embeddings are
/// one copy at either end, untied ones one at each (two on a single stage).
/// Every count of a stage's parameters (gradient sync, optimizer step, FSDP
/// gathers, the calibration's rows) uses it.
double embedding_params_on_gpu(bool tied_embeddings, double params_per_gpu_embedding, bool first,
                               bool last);

struct WorkProfile;
/// One GPU's parameters of a (virtual) stage of `layers` layers, with the
/// embedding and head it holds as the first and/or last.
double stage_params_on_gpu(const WorkProfile& profile, bool tied_embeddings, double layers,
                           bool first, bool last);

/// A forward's FSDP communication over `layers` layers: one gather per
/// layer (and of the other parameters).
TimeNs fsdp_forward_comm_ns(const FsdpComm& c, TimeNs layers);
/// A backward's: one gather and one reduce-scatter per layer (and of the others).
TimeNs fsdp_backward_comm_ns(const FsdpComm& c, TimeNs layers);
/// All of one micro-batch's: forward plus backward.
TimeNs fsdp_comm_ns(const FsdpComm& c, TimeNs layers);
/// What a micro-batch's forward over `layers` layers, each computing
/// `layer_ns`, in `passes` passes (an interleaved stage's chunks, each its
/// own pass: nothing prefetches across passes), waits for: each pass's first
/// gather, then each next layer's gather beyond the compute it hides under
/// and that compute's slowdown, and the other parameters' gather. Linear in
/// the layers, so a stage's sum over its chunks equals the sum of each
/// chunk's (passes = 1).
TimeNs fsdp_forward_exposed_ns(const FsdpComm& c, TimeNs layers, TimeNs layer_ns,
                               TimeNs passes = 1);
/// Likewise for a backward: each next layer's gather and the previous
/// layer's reduce-scatter beyond one layer's backward (and its slowdown),
/// and each pass's last reduce-scatter (and the other parameters').
TimeNs fsdp_backward_exposed_ns(const FsdpComm& c, TimeNs layers, TimeNs layer_ns,
                                TimeNs passes = 1);

}  // namespace parashift::core
