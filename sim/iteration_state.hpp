// The simulator's per-iteration state (sim/iteration.cpp's IterationSim):
// a worker is one (stage, replica, cp rank) tensor-parallel group; a
// data-parallel group is one (stage, cp rank)'s replicas.
#pragma once

#include <algorithm>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "core/cost/estimate.hpp"
#include "core/cost/fsdp.hpp"
#include "core/cost/work_profile.hpp"
#include "core/pipeline_schedule.hpp"
#include "sim/grad_sync_run.hpp"
#include "sim/iteration.hpp"
#include "sim/path_model.hpp"

namespace parashift::sim::detail {

using core::PassOp;

// Megatron's DDP bucket (core/cost/estimate.hpp).
inline double bucket_params(int dp) {
  return core::megatron_bucket_params(dp);
}

/// Throws std::invalid_argument unless `per_replica` (empty: the plan's even
/// split) has one entry of at least 1 per replica, keeps the global batch,
/// gives interleaved 1F1B multiples of pp and FSDP the same on every replica.
void check_replica_micro_batches(const std::vector<int>& per_replica,
                                 const core::ParallelPlan& plan);

/// A forward's (`forward`) or backward's FSDP time over `layers` layers
/// of `layer_ns` each: what the pass waits for, and the group's
/// communication during it (core/cost/fsdp.hpp). Under ZB-H1 its B carries
/// the backward's; W has none.
struct FsdpPass {
  TimeNs exposed_ns = 0;
  TimeNs comm_ns = 0;
};
FsdpPass fsdp_pass(const core::FsdpComm& c, bool forward, int layers, TimeNs layer_ns);

/// One layer's FSDP collectives over the data-parallel `ring` (tensor rank
/// 0's stands for all of them, as for the buckets without the flow
/// network), and those of the embedding and head parameters a chunk holds
/// (`first`/`last`: it is the first/last virtual stage), counted as the cost
/// model counts them: once each, once in all when tied.
core::FsdpComm fsdp_group_comm(const PathModel& paths, const core::NcclFabric& fabric,
                               const core::WorkProfile& profile, const core::ModelSpec& model,
                               const std::vector<int>& ring, bool first, bool last);

struct Worker {
  int stage = 0, replica = 0, cp_rank = 0;
  std::vector<int> gpus;  // tensor-parallel ranks (global GPU index)
  double slowdown = 1.0;
  std::vector<PassOp> ops;
  std::size_t next = 0;
  bool busy = false;
  bool at_rendezvous = false;       // FSDP: waiting for its group to reach the same pass
  std::vector<char> forward_ready;  // [mb * v + chunk]
  std::vector<char> backward_ready;
  std::vector<int> backward_left;  // per chunk
  std::vector<int> inflight;       // per chunk
  double activation_bytes = 0;
  TimeNs busy_ns = 0;
  bool deferred_running = false;  // delayed sync: the last iteration's steps, from time 0
  TimeNs tp_forward_ns_per_layer = 0, tp_backward_ns_per_layer = 0;
  TimeNs cp_forward_ns_per_layer = 0, cp_backward_ns_per_layer = 0;
  double params_on_gpu = 0;
  int layers_on_stage = 0;   // over all its chunks
  TimeNs sync_done_ns = -1;  // when its data-parallel group finished the gradient sync
  WorkerStats stats;
};

/// The distributed optimizer's parameter all-gather (`gather_ns`) runs
/// under the next iteration's first forward, which waits for each layer's
/// (Megatron --overlap-param-gather): what one micro-batch's forward over
/// the worker's stage does not hide extends the step, as the cost model
/// charges it (core/cost/overlap.hpp). One simulated iteration stands for
/// the steady state, so the part is charged at its end.
TimeNs param_gather_tail_ns(const Worker& w, const core::WorkProfile& profile, int pp,
                            TimeNs gather_ns);

struct Bucket {
  TimeNs ready_ns = 0;
  double bytes = 0;  // per GPU
};

struct DpGroup {
  int index = 0;
  std::vector<int> members;                // worker indices
  std::vector<std::vector<int>> tp_rings;  // per tensor-parallel rank: its data-parallel ring
  std::vector<int> reported;               // per chunk: members that started their last backward
  std::vector<std::vector<TimeNs>> bucket_ready;  // per chunk, per bucket: max over members
  int chunks_queued = 0;
  std::deque<Bucket> queue;  // buckets waiting for the group's communication stream
  bool streaming = false;    // a bucket's collective is running
  bool waiting = false;      // a wake-up for the front bucket is scheduled
  TimeNs busy_ns = 0;
  SyncShape shape;                // the shapes its collectives between nodes ran in
  bool deferred_running = false;  // delayed sync: the last iteration's steps, from time 0
  // FSDP: per chunk, one layer's gather and reduce-scatter and the chunk's
  // embedding/head parameters' (core/cost/fsdp.hpp); the members waiting to
  // start the pass every one of them must reach first (its gathers are
  // collectives of the whole group).
  std::vector<core::FsdpComm> fsdp_chunk;
  std::vector<int> fsdp_waiting;
  // HSDP: per tensor-parallel rank and shard, the GPUs holding that shard in
  // every replica; their gradients' all-reduce runs as the group's buckets.
  std::vector<std::vector<int>> replica_rings;
};

/// FSDP over `shard` of the group's data-parallel ranks (core::FsdpGroups):
/// fills `g.replica_rings` when the shards have replicas and returns the
/// first shard group's ring (tensor rank 0's), over which the gathers run.
std::vector<int> set_fsdp_rings(DpGroup& g, int shard);
/// The rings a group's buckets run over, and the collective: the replicas'
/// all-reduce under HSDP, else the plan's sync (all-reduce or, sharded,
/// reduce-scatter) over the data-parallel rings.
const std::vector<std::vector<int>>& bucket_rings(const DpGroup& g);
core::CollectiveKind bucket_kind(const DpGroup& g, const core::ParallelPlan& plan);

/// Delayed sync: starts every group's deferred steps (the previous
/// iteration's, over its stage's parameters) now, marking it running;
/// `done(g)` once they have finished (their time counts as the group's busy).
void start_deferred_syncs(const GradSyncRun& run, const BucketSyncJob& job,
                          std::vector<DpGroup>& groups, const std::vector<Worker>& workers,
                          const std::function<void(DpGroup&)>& done);

/// What each link of `network` has carried so far (links that carried bytes).
std::vector<LinkUse> link_uses(const FlowNetwork& network);

/// Sets worker `w`'s (its GPUs and slowdown set) per-layer tensor- and
/// context-parallel time; `cp_ring` holds tensor rank 0 of each cp rank.
void set_layer_comm(Worker& w, const core::LayerWork& layer, const std::vector<int>& cp_ring,
                    const PathModel& paths, const core::NcclFabric& fabric);

/// The max-min network an iteration runs on alone: `in`'s class weights,
/// `paths`' link overrides, busy links into `in.trace` when set.
std::unique_ptr<FlowNetwork> make_flow_network(Kernel& kernel, const PathModel& paths,
                                               const IterationInput& in);

/// Model FLOPs, MFU and tokens per second of `r` (its iteration_ns set).
void fill_rates(IterationResult& r, const IterationInput& in);

}  // namespace parashift::sim::detail
