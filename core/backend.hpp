// The one narrow interface both worlds implement: sim/ (a discrete-event
// cluster) and hw/ (real devices). core/ never includes either; it asks a
// backend what it can do through Capabilities, which are data.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/compress/compression_spec.hpp"
#include "core/directive.hpp"
#include "core/parallel_plan.hpp"
#include "core/snapshot/remap.hpp"
#include "core/snapshot/snapshot_holdings.hpp"
#include "core/units.hpp"

namespace parashift::core {

// Each field is read by a decision: live_repartition by the balancer (no
// re-partition or re-balance is proposed without it), snapshots_to_host by
// JobRunner::set_snapshot_every (a scheduled snapshot cadence needs it),
// link_telemetry by the straggler detector (links are judged only from a
// backend that measures them), ranks by the runner's checks of fault targets.
struct Capabilities {
  bool live_repartition = false;   // RepartitionDirective / RebalanceDirective
  bool snapshots_to_host = false;  // SnapshotDirective / RestoreDirective
  bool link_telemetry = false;     // StepReport::links is filled
  bool live_replan = false;        // ReplanDirective that changes tp, pp, dp, cp or the sharding
  int ranks = 0;
  /// Whether the backend runs `plan` (a re-plan's target must pass); empty:
  /// every plan valid for the cluster. The executor, for one, runs no
  /// context parallelism and no FSDP.
  std::function<bool(const ParallelPlan&)> runs_plan;
  /// A backend that moves a rank onto another GPU (RemapDirective, the
  /// simulator): the GPU each rank runs on, the GPUs no rank runs on, and
  /// where every GPU sits (by GPU id), read by JobRunner's recovery. Empty
  /// where ranks cannot move (the executor relaunches instead).
  std::vector<int> gpu_of_rank;
  std::vector<int> spare_gpus;
  std::vector<GpuPlace> place_of_gpu;
  /// By GPU: when a failed one is back in service (repaired), on the
  /// backend's clock; 0 for one in service, -1 for one not coming back (a
  /// failed cable cut it off). Empty where the backend repairs nothing.
  /// JobRunner's recovery reads it: with no spare and no smaller plan the
  /// job waits for the repair instead of ending.
  std::vector<TimeNs> back_at_ns;
  /// A backend whose snapshots live in host memory that dies with its host
  /// (the simulator): what survives of them now, read by JobRunner's
  /// recovery to choose the version it restores (core::choose_version).
  /// Empty: every snapshot taken survives, and the newest is restored.
  std::function<SnapshotHoldings()> snapshot_holdings;
  /// A backend whose data-parallel rings can run in another order
  /// (ReorderDirective, the simulator), read by the `aggregation` module:
  /// the host a rank runs on now, the fabric links the network leg of a
  /// ring edge of data-parallel group `group` from one rank to the next
  /// crosses (its routes, as the backend's flows take them), and the order
  /// the group's rings run in now (replicas; empty: 0..dp-1). Empty where
  /// rings keep the launcher's order (the executor).
  struct RingRoutes {
    std::function<int(int rank)> host_of_rank;
    std::function<std::vector<std::string>(int group, int from_rank, int to_rank)> edge_links;
    std::function<std::vector<int>(int group)> order;
    /// Optional: whether the group's gradient all-reduce ran last as NCCL's
    /// double binary trees between nodes (core/cost/nccl_tree.hpp), whose
    /// edges the order shapes too; absent or false: rings.
    std::function<bool(int group)> tree;
    explicit operator bool() const { return host_of_rank && edge_links && order; }
  };
  RingRoutes ring_routes;
};

/// Busy time of one communication group in one iteration.
struct GroupComm {
  std::string group;  // e.g. "tp[stage 3, replica 0]", "dp[stage 0]"
  std::string kind;   // collective name
  TimeNs busy_ns = 0;
  double bytes = 0;
};

struct LinkTelemetry {
  std::string link;
  double bytes = 0;
  double utilisation = 0;  // busy share of the iteration, 0..1
  /// Bytes of traffic not the job's (other tenants) among `bytes`: what
  /// the switch port's counter shows beyond the job's own flows.
  double foreign_bytes = 0;
  double capacity_Bps = 0;  // the link's rate now; 0: not known
  double nominal_Bps = 0;   // its rate when healthy (a degraded link's is more); 0: not known
};

/// A failure the backend saw during a step: what failed and when.
struct FailureSeen {
  // "kill" (a rank's process died), "fail" (a component), "drain" (a GPU
  // out of service with a failed one's host), "comm" (a call failed)
  std::string kind;
  std::string component;  // "rank 2", "gpu 17", "link leaf3-spine1"
  TimeNs at_ns = 0;       // on the backend's clock (simulated, or the step's start)
  std::int64_t iteration = 0;
  std::string detail;  // what the backend saw, when it says more ("MPI_Recv failed: ...")
};
std::string to_string(const FailureSeen& failure);  // "kill rank 2 at iteration 5"

/// The squared gradient norms a data-parallel sync sees: each replica's
/// before the reduction (their mean) and the reduced one after it.
struct GradientNorms {
  double replica_sq_norm = 0;
  int replica_batch = 0;  // sequences behind each replica's gradient
  double global_sq_norm = 0;
  int global_batch = 0;  // sequences behind the reduced gradient
};

/// The share of the gradient a compressor leaves out
/// (core/compress/compression_fit.hpp), energy-weighted over every rank's
/// local gradient matrices before the sync.
struct CompressionFit {
  CompressionSpec compressor;
  double left_out = 0;  // in [0, 1]
};

/// A directive applied between two steps and the time it took: the
/// executor's wall clock (its slowest rank), the simulator's count.
struct AppliedCost {
  std::string kind;  // kind_name() of the directive: "replan", "snapshot", ...
  TimeNs ns = 0;
};

/// What one iteration measured. Per-rank vectors are indexed by global rank.
struct StepReport {
  std::int64_t iteration = 0;
  TimeNs iteration_ns = 0;
  std::vector<TimeNs> rank_compute_ns;  // forward, backward, recompute: not the optimizer
  /// The optimizer step's own time per rank, when the backend times it
  /// (empty when it does not: the executor's counted clock).
  std::vector<TimeNs> rank_optimizer_ns;
  std::vector<TimeNs> rank_exposed_comm_ns;
  std::vector<double> rank_peak_memory_bytes;
  std::vector<GroupComm> comm;
  std::vector<LinkTelemetry> links;
  std::vector<FailureSeen> failures;       // non-empty: the iteration did not complete
  std::optional<GradientNorms> gradients;  // when the backend measures them
  /// Each probed compressor's fit, on the iterations the backend measures
  /// them (the executor's HwOptions::compression_probes); empty otherwise.
  std::vector<CompressionFit> compression_fits;
  /// The directives applied since the previous step, in order, each with
  /// its time; their sum is part of iteration_ns.
  std::vector<AppliedCost> applied;
  /// The backend's first iteration since it started or restored: its time
  /// includes allocation, first touches and connection set-up (the warm-up
  /// nccl-tests and Megatron's timers leave out), so it measures no rate.
  bool warmup = false;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual Capabilities capabilities() const = 0;
  /// Runs (or simulates) one training iteration under `plan`.
  virtual StepReport step(const ParallelPlan& plan) = 0;
  /// Applies a directive between iterations. Throws std::invalid_argument
  /// when the backend's capabilities do not include it.
  virtual void apply(const Directive& directive) = 0;
};

}  // namespace parashift::core
