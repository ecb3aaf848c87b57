// Lowering and simulation of one training iteration: the plan becomes, for
// every pipeline stage of every data-parallel replica and context-parallel
// rank (a "worker": the tensor-parallel group that runs in lockstep), the op
// order of its schedule; forward and backward passes carry their tensor- and
// context-parallel collectives; activations and gradients travel between
// stages as sends; data-parallel gradient buckets are reduced while the last
// backward pass still runs (Megatron's overlap_grad_reduce); the optimizer
// step closes the iteration. The discrete-event kernel orders it all.
//
// Network: tensor- and context-parallel collectives run inside a worker's
// pass stream on its node's non-blocking NVSwitch and are timed on their
// routes (PathModel). Pipeline sends and data-parallel buckets travel as
// flows on the max-min network (NetworkModel::MaxMin), where they contend on
// shared links: every tensor-parallel rank's data-parallel ring is a coflow
// of its own; a pipeline send is one flow for tensor rank 0, standing for
// the identical sends of the other ranks on their own rails.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "core/cost/nccl_model.hpp"
#include "core/cost/work_profile.hpp"
#include "core/device_spec.hpp"
#include "core/model_spec.hpp"
#include "core/parallel_plan.hpp"
#include "core/traffic_class.hpp"
#include "sim/path_model.hpp"

namespace parashift::core {
struct Scenario;
}

namespace parashift::sim {

class TraceRecorder;

/// How transfers between GPUs are timed.
enum class NetworkModel {
  MaxMin,  // flows share links max-min fairly (sim/network/flow_network.hpp)
  Path,    // each transfer alone on its route: bottleneck bandwidth + latency
};

struct IterationInput {
  const core::ModelSpec* model = nullptr;
  const core::DeviceSpec* device = nullptr;
  const core::ParallelPlan* plan = nullptr;
  int seq_len = 0;
  /// Layers of each virtual stage (pp * virtual_stages entries); empty: an even split,
  /// the first (layers mod stages) virtual stages taking one layer more.
  std::vector<int> layers_per_virtual_stage;
  /// Micro-batches of each data-parallel replica (dp entries, summing to
  /// global_batch / micro_batch); empty: global_batch / (dp * micro_batch) each.
  std::vector<int> micro_batches_per_replica;
  /// Compute slowdown factor per GPU (1 = nominal); empty: all nominal.
  std::vector<double> gpu_slowdown;
  /// The GPU each rank runs on (a rank moved onto a spare); empty: rank r on GPU r.
  std::vector<int> gpu_of_rank;
  int gpu_of(int rank) const {
    return gpu_of_rank.empty() ? rank : gpu_of_rank[static_cast<std::size_t>(rank)];
  }
  /// The order each data-parallel group's rings run in (by group index,
  /// core::ReorderDirective): position k is replica dp_orders[g][k]; a
  /// group without an entry, or an empty one, runs replicas 0..dp-1.
  std::vector<std::vector<int>> dp_orders;
  int replica_at(int group, int position) const {
    const auto g = static_cast<std::size_t>(group);
    return g < dp_orders.size() && !dp_orders[g].empty()
               ? dp_orders[g][static_cast<std::size_t>(position)]
               : position;
  }
  NetworkModel network = NetworkModel::MaxMin;
  core::NcclAlgo nccl_algo = core::NcclAlgo::Auto;  // cluster.nccl_algo (NCCL_ALGO)
  /// Max-min network only: the traffic classes' weights, and links on which
  /// another tenant sends all the while the iteration runs (its bytes count
  /// in IterationResult::links).
  core::TrafficWeights traffic;
  std::vector<int> tenant_links;
  /// Max-min network only: snapshot replication under the iteration, each
  /// pair (from GPU, to GPU) with `snapshot_bytes_left` to send
  /// (sim/network/snapshot_traffic.hpp).
  std::vector<std::pair<int, int>> snapshot_pairs;
  double snapshot_bytes_left = 0;
  /// Records passes, collectives and busy links when set.
  TraceRecorder* trace = nullptr;
};

/// What one link carried in the iteration (max-min network only).
struct LinkUse {
  int link = 0;
  double bytes = 0;
  TimeNs busy_ns = 0;
  double foreign_bytes = 0;  // of `bytes`, another tenant's (on a shared cluster: not the job's)
};

/// What one worker (a tensor-parallel group) did; times in ns.
struct WorkerStats {
  int stage = 0;
  int replica = 0;
  int cp_rank = 0;
  double slowdown = 1.0;  // compute-time factor of its slowest GPU
  TimeNs compute_ns = 0;  // forward, backward, recompute
  TimeNs tp_comm_ns = 0;  // tensor-parallel collectives in the pass stream
  TimeNs cp_comm_ns = 0;  // context-parallel exchange in the pass stream
  TimeNs pp_send_ns = 0;  // its activation and gradient sends, start to arrival, summed
  TimeNs bubble_ns = 0;   // idle: pipeline fill, drain and waits for other stages
  TimeNs last_pass_end_ns = 0;
  TimeNs dp_exposed_ns = 0;  // waiting for gradient sync after the last pass
  TimeNs optimizer_ns = 0;
  TimeNs param_gather_ns = 0;  // distributed optimizer's parameter all-gather, under the
                               // next iteration's first forward (overlap_param_gather);
                               // what that forward does not hide is in dp_exposed_ns
  TimeNs finish_ns = 0;
  double static_bytes = 0;  // weights + gradients + optimizer state per GPU
  double peak_activation_bytes = 0;
};

struct IterationResult {
  TimeNs iteration_ns = 0;
  std::vector<WorkerStats> workers;      // index: cp_rank + cp * (replica + dp * stage)
  TimeNs dp_sync_ns = 0;                 // busiest data-parallel group's total collective time
  std::vector<TimeNs> dp_group_busy_ns;  // each group's (index: cp_rank + cp * stage)
  std::vector<char>
      dp_group_tree;  // each group's: most of its sync's bytes between nodes ran as trees
  double model_flops = 0;
  double mfu = 0;
  double tokens_per_s = 0;
  double bubble_share = 0;       // mean over workers of bubble / iteration
  TimeNs exposed_comm_ns = 0;    // on the worker that finishes last
  double peak_memory_bytes = 0;  // max over workers
  std::uint64_t events = 0;
  std::vector<LinkUse> links;          // links that carried traffic, by link id
  double snapshot_bytes_per_pair = 0;  // replication each pair got through
  TimeNs snapshot_done_ns = -1;        // when the last pair finished; -1: not all did
  const WorkerStats& critical() const;
};

/// The part of an iteration a snapshot's device-to-host copy can run under
/// (core::SnapshotConfig::stall_ns): all of it before the slowest worker's
/// optimizer step, which must not change the weights being copied.
inline TimeNs snapshot_window_ns(const IterationResult& r) {
  return r.workers.empty() ? 0 : r.iteration_ns - r.critical().optimizer_ns;
}

/// The share of the iteration the busiest data-parallel group's
/// collectives keep a link busy, in [0, 0.95]: what a snapshot's
/// replication does not get of the links it shares with them.
inline double training_share(const IterationResult& r) {
  const double share =
      static_cast<double>(r.dp_sync_ns) / static_cast<double>(std::max<TimeNs>(1, r.iteration_ns));
  return std::clamp(share, 0.0, 0.95);
}

/// The scenario's model, plan and sequence length on `device` (the input
/// points into both), an even split and nominal GPUs.
IterationInput scenario_input(const core::Scenario& scenario, const core::DeviceSpec& device,
                              NetworkModel network);

IterationResult simulate_iteration(const IterationInput& input, const core::WorkProfile& profile,
                                   const PathModel& paths);

class Kernel;
class FlowNetwork;
namespace detail {
class IterationSim;
}
/// An iteration running on a kernel and max-min network other jobs'
/// iterations share (sim/shared_cluster.hpp). Hold it until the kernel has
/// run dry: flows it started may finish after its end.
using SharedIteration = std::shared_ptr<detail::IterationSim>;

/// Starts `input`'s iteration at kernel.now() on `network` (its class
/// weights and link rates are the caller's; input.network is not read and
/// input.trace must be null). `done` gets the result, its times counted from the start
/// and without `links` (the network's are the cluster's: sim/link_window.hpp), at the iteration's
/// end from inside the kernel's run. `input` and `profile` must outlive it.
SharedIteration start_shared_iteration(const IterationInput& input,
                                       const core::WorkProfile& profile, const PathModel& paths,
                                       Kernel& kernel, FlowNetwork& network,
                                       std::function<void(IterationResult)> done);

}  // namespace parashift::sim
