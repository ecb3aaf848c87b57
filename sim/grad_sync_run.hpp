// The simulator's run of one gradient bucket under a plan's sync mode and
// compressor: the steps of core/cost/grad_sync.hpp one after another, each
// over its scope's rings, every tensor-parallel rank's data-parallel ring at
// once (flows share links with everything else in flight). A scope's rings
// are cut from each data-parallel ring by host: inside a node, the members
// on one host; between nodes, the members with the same place on their
// host (one rail each). The compressor's GPU time comes first. Int8's
// all-to-all moves (n - 1)/n of its buffer per rank like a ring
// reduce-scatter and runs as one. On the flow network each collective takes
// the shape NCCL's choice gives it (ring, or trees between nodes).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/cost/grad_sync.hpp"
#include "sim/kernel.hpp"
#include "sim/network/flow_network.hpp"
#include "sim/path_model.hpp"

namespace parashift::sim {

/// The bytes a group's sync sent between nodes, and those it sent as NCCL's
/// trees (the flow network's nccl_coflow.hpp; the closed form prices
/// without a shape): NCCL's tuner picks by size, so a group's large buckets
/// may run as rings and its small last one as trees.
struct SyncShape {
  double bytes = 0;
  double tree_bytes = 0;
  bool mostly_tree() const { return bytes > 0 && 2 * tree_bytes >= bytes; }
};

struct GradSyncRun {
  Kernel& kernel;
  FlowNetwork* network = nullptr;  // none: closed-form rings on idle links
  const PathModel& paths;
  const core::NcclFabric& fabric;
  SyncShape* shape = nullptr;  // where to count the shapes the collectives ran in
};

/// Starts the steps now on `rings` (each a data-parallel ring of GPUs);
/// `on_done(t_ns)` runs when the last has finished.
void start_grad_sync(const GradSyncRun& run, const std::vector<core::SyncStep>& steps,
                     TimeNs compute_ns, const std::vector<std::vector<int>>& rings,
                     std::uint64_t flow_hash, std::function<void(TimeNs)> on_done);

/// What a bucket's sync needs of the job.
struct BucketSyncJob {
  const core::ParallelPlan* plan = nullptr;
  const core::ModelSpec* model = nullptr;
  const core::DeviceSpec* device = nullptr;  // for the compressor's time
  double grad_bytes_per_param = 0;
};

/// Starts one bucket of `bytes` on `rings`: a flat uncompressed sync as one
/// collective of `kind` on every ring at once (`kind`: the all-reduce, or
/// the sharded optimizers' reduce-scatter), otherwise start_grad_sync with
/// the plan's steps (core::bucket_sync_steps, less the deferred ones of a
/// delayed sync) and compressor time.
void start_bucket_sync(const GradSyncRun& run, const BucketSyncJob& job, core::CollectiveKind kind,
                       double bytes, const std::vector<std::vector<int>>& rings,
                       std::uint64_t flow_hash, std::function<void(TimeNs)> on_done);

/// Delayed sync: starts the deferred steps of a stage's `params` gradients
/// (the last iteration's, core::bucket_sync_steps' deferred ones) now.
void start_deferred_sync(const GradSyncRun& run, const BucketSyncJob& job, double params,
                         const std::vector<std::vector<int>>& rings, std::uint64_t flow_hash,
                         std::function<void(TimeNs)> on_done);

/// core::scope_rings of one data-parallel ring of GPUs (hosts from the topology).
std::vector<std::vector<int>> scope_rings(const topo::Topology& topology,
                                          const std::vector<int>& ring, core::SyncScope scope);

}  // namespace parashift::sim
