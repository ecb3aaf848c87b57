// The simulator as a core::Backend: each step() simulates one iteration of
// the scenario's cluster at the current simulated time, with the slowdown
// events active then (faults.events); an iteration is re-simulated only when
// something that affects it (plan, layer split, micro-batch shares, GPU
// speeds, link bandwidths) changed since the last one, and reused otherwise.
// A scheduled kill event (faults.events kind kill) is reported as the
// step's failure, before its iteration runs; so is a fail event on a GPU,
// NIC, node or rack (each GPU it takes, "fail gpu G"), before the first
// iteration that starts at or after its time: those GPUs are gone until
// faults.repair has passed, then free again (no rank may move onto them
// meanwhile; a re-plan places its ranks on the GPUs left; a GPU a failed
// cable cut off stays gone). Planned maintenance is for fault campaigns
// (parashift faults): the constructor refuses it. Directives are timed: a
// re-partition's moved state, a snapshot's device -> host copy, a restore's
// copy back, each charged to the next iteration. Under a convergence model
// (scenario `convergence:`) each step also makes its progress and reports
// the gradient norms a data-parallel job measures.
#pragma once

#include <algorithm>
#include <deque>
#include <limits>
#include <optional>
#include <set>

#include "core/backend.hpp"
#include "core/cost/work_profile.hpp"
#include "core/scenario/scenario.hpp"
#include "sim/faults/cluster_slots.hpp"
#include "sim/iteration.hpp"
#include "sim/path_model.hpp"
#include "sim/slowdowns.hpp"

namespace parashift::sim {

/// A snapshot version replicated to its peer hosts: taken before the
/// iteration that started at `taken_ns`, committed at `committed_ns`.
struct SnapshotCommit {
  long long version = 0;
  TimeNs taken_ns = 0;
  TimeNs committed_ns = 0;
};

/// The scenario's fault events (none without a `faults:` section).
const std::vector<core::FaultEvent>& events_of(const core::Scenario& s);

/// The iteration's busy time per communication group (tp, cp, pp, dp),
/// named as the hw executor's StepReport names them.
std::vector<core::GroupComm> group_comm(const IterationResult& result,
                                        const core::ParallelPlan& plan);

class SimBackend : public core::Backend {
 public:
  explicit SimBackend(const core::Scenario& scenario);

  core::Capabilities capabilities() const override;
  core::StepReport step(const core::ParallelPlan& plan) override;
  void apply(const core::Directive& directive) override;

  /// step() in two halves, for a driver that runs the iteration itself (the
  /// jobs of a shared cluster, sim/shared_cluster.cpp). begin_step() returns
  /// the report of a step that runs nothing (a failure); otherwise it fills
  /// `input` (pointing into `plan`, which must outlive the iteration) and
  /// `profile`, or leaves input.plan null when the last iteration is reused.
  /// end_step() takes the iteration's result (none when reused).
  std::optional<core::StepReport> begin_step(const core::ParallelPlan& plan, IterationInput& input,
                                             core::WorkProfile& profile);
  core::StepReport end_step(const core::ParallelPlan& plan, std::optional<IterationResult> result);
  /// Whether an iteration whose inputs did not change is reused (default)
  /// or simulated again (a shared cluster: the other jobs' traffic changes it).
  void set_reuse(bool reuse) { reuse_ = reuse; }
  /// The job's ranks on `gpu_of_rank` (rank r on gpu_of_rank[r]); every
  /// other GPU of the topology is another job's, never this one's (not a
  /// spare, not a re-plan's).
  void set_placement(std::vector<int> gpu_of_rank);
  /// A directive's time charged to the next step (state moved, a switch).
  TimeNs pending_move_ns() const { return pending_move_ns_; }

  /// The full result of the latest step.
  const IterationResult& last_result() const { return *last_; }
  /// How many steps were simulated rather than reused.
  int simulated_steps() const { return simulated_; }
  /// Simulated time at the start of the next step.
  TimeNs now_ns() const { return now_ns_; }
  /// Record the next simulated iteration into `trace` (null: stop recording).
  void set_trace(TraceRecorder* trace) { trace_ = trace; }
  /// Replaces the scenario's slowdown events (tests, contract harnesses).
  void set_slowdowns(Slowdowns slowdowns) {
    slowdowns_ = std::move(slowdowns);
    last_key_.reset();
  }
  /// `gpu` alone fails now, as a fail event under faults.replace gpu would
  /// (contract harnesses: the rank moves by itself, as on every backend):
  /// the next step reports it.
  void fail_gpu(int gpu) {
    gpu_failures_.insert(gpu_failures_.begin() + static_cast<std::ptrdiff_t>(gpu_failures_fired_),
                         GpuFailure{now_ns_, {gpu}});
  }
  /// Uses `profile` instead of the cost model's work profile (tests and
  /// contract harnesses that need arithmetic-exact stage times).
  void set_profile(core::WorkProfile profile) {
    profile_override_ = std::move(profile);
    last_key_.reset();
  }
  /// The plan of the last step (none before the first).
  const std::optional<core::ParallelPlan>& last_plan() const { return last_plan_; }
  /// The last step's plan, or the scenario's before the first.
  const core::ParallelPlan& plan_now() const { return last_plan_ ? *last_plan_ : scenario_.plan; }
  /// The layer split and micro-batch shares the backend now runs.
  std::vector<int> layers_per_virtual_stage(const core::ParallelPlan& plan) const;
  std::vector<int> micro_batches_per_replica(const core::ParallelPlan& plan) const;
  const PathModel& paths() const { return paths_; }
  /// The GPU `rank` runs on: its own (GPU r for rank r) until a
  /// RemapDirective moves it onto another, a spare.
  int gpu_of_rank(int rank) const {
    return gpu_of_rank_.empty() ? rank : gpu_of_rank_[static_cast<std::size_t>(rank)];
  }
  /// Whether any slowdown event (slow, degrade, background, tenant, jitter) is scheduled.
  bool has_slowdowns() const { return !slowdowns_.empty(); }
  /// The snapshots whose replication finished, in order.
  const std::vector<SnapshotCommit>& snapshot_commits() const { return commits_; }
  /// GPUs that have not failed (spares included).
  int live_gpus() const { return static_cast<int>(std::count(dead_.begin(), dead_.end(), false)); }
  /// Whether any kill or fail event is scheduled.
  bool has_failures() const;
  /// Under a convergence model (scenario `convergence:`): the progress made
  /// so far, in steps at an infinite batch, and whether it reached the target.
  double progress_steps() const { return progress_steps_; }
  bool converged() const {
    return scenario_.convergence && progress_steps_ >= scenario_.convergence->target_steps;
  }

 private:
  /// apply() without the accounting of each directive's time.
  void apply_action(const core::Directive& directive);
  /// The scenario's fail events, by time (the constructor's last part).
  void read_failures();
  /// Takes the cable of `link` out of service; returns the GPUs it cut off.
  std::vector<int> take_link_down(int link);
  /// Starts replicating snapshot `version` to the peer hosts (max-min
  /// network and faults.snapshot.replicas > 1; otherwise only the copy).
  void start_replication(long long version);
  /// Counts the last iteration's replication; commits the version when done.
  void count_replication(TimeNs iteration_start_ns);
  /// What survives of the snapshots (sim_backend_holdings.cpp): version
  /// `version` taken now, each rank's state in its host's memory (and, from
  /// start_replication, its peers' once committed).
  void init_holdings();  // the constructor's: memory ids, the remote checkpoints' cadence
  void hold_version(long long version);
  void commit_version(long long version, TimeNs at_ns);
  void evict_versions();  // beyond faults.snapshot.keep_versions
  /// `host` failed: its memory, and every snapshot replica in it, is gone.
  void lose_host_memory(int host);
  /// After a restore of `version`: newer versions belong to the timeline
  /// rolled back; the ranks' hosts hold the restored state.
  void restored(long long version, bool from_remote);
  /// A restore after a wait a failure cut short supersedes the one before
  /// it: that one's charge (detection, restart, copy) is dropped.
  void supersede_restore();
  /// Remote checkpoints written by now (every faults.baseline interval).
  void write_remote_checkpoints();
  core::SnapshotHoldings snapshot_holdings() const;
  /// A scheduled kill event for the iteration about to run, each once.
  std::optional<core::FailureSeen> kill_due();
  /// The GPUs of fail events due before the iteration about to run, each
  /// reported once; marks them dead until faults.repair has passed (a GPU
  /// a failed cable cut off stays dead: the cable is not repaired).
  std::vector<core::FailureSeen> gpu_failures_due();
  /// Failed GPUs whose repair is done by `by_ns`: free again (spares).
  void repairs_due(TimeNs by_ns);
  /// Ranks left on failed GPUs (recovery found no spare and no smaller
  /// plan: the job waits for the repair): the next iteration starts once
  /// they are back, the wait charged to it. `ranks`: the plan's. Returns
  /// true where a failure due before the repair cut the wait short.
  bool wait_for_repairs(int ranks);
  /// A data-parallel group's rings in another order from the next step,
  /// charged core::kRingRebuildNs (sim_backend_rings.cpp).
  void reorder(const core::ReorderDirective& directive);
  /// Capabilities::ring_routes: the hosts and routes the ranks have now.
  core::Capabilities::RingRoutes ring_routes() const;
  /// Every rank's GPU, explicit (rank r on GPU r until a remap or re-plan).
  std::vector<int> placement(int ranks) const;
  core::SnapshotConfig snapshot_config() const;   // the scenario's, or the defaults
  const core::FaultConfig& fault_config() const;  // the scenario's, or the defaults
  double rank_state_bytes() const;                // one rank's state under the running plan
  /// One rank's state copied from host to device (a restore).
  TimeNs snapshot_copy_ns() const;
  TimeNs repartition_move_ns(const std::vector<int>& from, const std::vector<int>& to,
                             const core::ParallelPlan& plan) const;

  struct Key {
    std::string plan;
    int global_batch = 0;
    std::vector<int> layers;
    std::vector<int> micro_batches;
    std::vector<int> gpus;
    ClusterState cluster;
    int links_down = 0;
    double replication_left = 0;
    std::vector<std::vector<int>> dp_orders;
    friend bool operator==(const Key&, const Key&) = default;
  };

  const core::Scenario& scenario_;
  // The GPU slots: the topology's and `faults.spares` spare GPUs on spare
  // hosts, their hosts and racks.
  ClusterSlots slots_;
  // The cluster as it really is, when it differs from scenario.topology: the
  // spare hosts in the graph, the truth's link rates (scenario.truth); and its
  // device efficiencies. The policy sees the preset.
  std::optional<topo::Topology> own_topology_;
  core::DeviceSpec truth_device_;
  // The device groups as they really are (`cluster.groups` with the truth's factors).
  std::vector<core::DeviceGroup> truth_groups_;
  PathModel paths_;
  Slowdowns slowdowns_;
  std::vector<int> layers_per_virtual_stage_;
  std::vector<int> micro_batches_per_replica_;
  std::vector<int> gpu_of_rank_;  // empty: rank r on GPU r
  bool failed_ = false;           // a rank was lost (killed, its GPU failed) since the last restore
  bool moved_ = false;            // a rank moved onto another GPU since the last restore
  bool replanned_ = false;        // ... and the job re-planned (shrunk) since
  std::vector<std::size_t> kills_fired_;  // the kill events that happened
  struct GpuFailure {
    TimeNs at_ns = 0;
    std::vector<int> gpus;  // every GPU the failed component takes
    int link = -1;          // a failed link: its id
    bool drains = false;    // a GPU or NIC: under faults.replace host its host is drained
    bool memory = false;    // a node or rack: its hosts' memory dies with it
  };
  std::vector<GpuFailure> gpu_failures_;  // by time
  std::size_t gpu_failures_fired_ = 0;
  int links_down_ = 0;             // cables failed so far
  std::vector<bool> dead_;         // by GPU: failed (until repaired)
  std::vector<TimeNs> repair_at_;  // by GPU: when a failed one is back; 0: never
  std::vector<TimeNs> up_since_;   // by GPU: when it last came back from a repair (0: never out)
  std::vector<core::GpuPlace> place_of_gpu_;  // by GPU: its host and rack
  std::optional<Key> last_key_;
  std::optional<IterationResult> last_;
  ClusterState last_cluster_;
  std::int64_t iteration_ = 0;
  TimeNs now_ns_ = 0;
  int simulated_ = 0;
  TraceRecorder* trace_ = nullptr;
  std::optional<core::WorkProfile> profile_override_;
  std::optional<core::ParallelPlan> last_plan_;
  core::WorkProfile last_profile_;
  TimeNs pending_move_ns_ = 0;  // state moved by a directive, charged to the next step
  TimeNs ahead_ns_ = 0;         // of it, waited for repairs: now_ns_ already past it
  bool reuse_ = true;
  std::vector<core::AppliedCost> pending_applied_;  // ... each directive's share
  double progress_steps_ = 0;         // convergence model: steps at an infinite batch made
  std::vector<long long> snapshots_;  // versions taken
  // Snapshot replication under the iterations (max-min network): the
  // version being replicated, its pairs and the bytes each has left.
  long long replicating_version_ = -1;
  TimeNs replication_taken_ns_ = 0;
  std::vector<std::pair<int, int>> replication_pairs_;
  double replication_left_bytes_ = 0;
  // Under the path network: the replication alone (replication_alone_ns),
  // priced when the snapshot is taken, and when it commits (-1: not yet
  // started; it starts with the next iteration).
  TimeNs replication_alone_ns_ = -1;
  TimeNs replication_due_ns_ = -1;
  struct AloneInputs {
    std::vector<std::pair<int, int>> pairs;
    std::vector<std::pair<int, double>> links;
    double bytes = 0, share = 0;
    int links_down = 0;
    friend bool operator==(const AloneInputs&, const AloneInputs&) = default;
  };
  std::optional<std::pair<AloneInputs, TimeNs>> alone_cache_;  // the last one priced
  std::vector<SnapshotCommit> commits_;
  // What survives of the snapshots: each version kept (faults.snapshot.
  // keep_versions, and the newest committed), by rank the memories holding
  // it; memories get a new id when their host fails.
  struct HeldVersion {
    long long version = 0;
    TimeNs taken_ns = 0;
    TimeNs committed_ns = -1;               // replicated to its peers (-1: not, or not yet)
    std::vector<std::vector<int>> holders;  // by rank
    std::vector<std::vector<int>> peers;    // by rank: replicas, holders once committed
  };
  std::deque<HeldVersion> held_;
  std::vector<int> memory_of_host_;  // by host
  int next_memory_ = 0;
  std::set<int> dead_memories_;
  // When the latest failure reported happened (none yet: the end of time).
  TimeNs last_failure_ns_ = std::numeric_limits<TimeNs>::max();
  bool restore_cut_short_ = false;  // a wait after a restore ended by a failure
  long long remote_version_ = 0;    // what the remote checkpoint holds: the initial state first
  TimeNs remote_every_ns_ = 0;      // the baseline's checkpoint interval (0: no faults section)
  TimeNs remote_next_ns_ = 0;       // when the next remote checkpoint starts
  TimeNs checkpoint_read_ns_ = 0;   // the whole state to or from remote storage
  /// Each data-parallel group's ring order (ReorderDirective; by group
  /// index, empty: replicas in order); a re-plan to other groups (another
  /// tp, pp, dp or cp) starts them over.
  std::vector<std::vector<int>> dp_orders_;
};

}  // namespace parashift::sim
