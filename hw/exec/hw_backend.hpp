// The executor on real hardware as a core::Backend: one process per rank
// runs real iterations of the synthetic transformer (the device layer,
// device/device_layer.hpp, on the rank's DeviceKernels: host memory and
// Eigen by default, a GPU with CudaKernels), on synthetic data or a text
// (HwOptions::text), shaped by the ModelSpec and
// plan: its pipeline schedule (GPipe, 1F1B, ZB-H1, interleaved 1F1B) with
// activations sent between stages, tensor parallelism (with or without
// sequence parallelism), activation recompute, bucketed data-parallel
// gradient all-reduce or the distributed optimizer, SGD or Adam on real
// buffers. Directives between iterations move real layer buffers between
// stages (repartition), change micro-batches per replica (rebalance), write
// snapshot shards to node shared memory and restore from them, fetching only
// the shards a node lost.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <semaphore>
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "core/model_spec.hpp"
#include "hw/comm/communicator.hpp"
#include "hw/device/device_layer.hpp"
#include "hw/exec/comm_groups.hpp"
#include "hw/exec/compressed_sync.hpp"
#include "hw/model/dp_shards.hpp"
#include "hw/model/optimizer.hpp"
#include "hw/model/text_task.hpp"
#include "hw/snapshot/shard_store.hpp"

namespace parashift::hw {

class ByteWriter;
class VirtualClock;
class VirtualTimeCommunicator;
class ByteReader;

/// How a rank's compute time is measured: wall time, or this thread's CPU
/// time (ranks that share cores, e.g. threads of one process in tests, see
/// only their own work; waits in collectives are not compute either way),
/// or counted: every layer pass the rank runs counts its work units
/// (forward 1, backward 2: input and weight gradients; ZB-H1's B and W 1
/// each; recompute its GEMMs' share of a forward's: full 1, selective the
/// scores', hw/model/layer_ops.hpp) per sequence of its micro-batch,
/// divided among the tensor-parallel ranks (units x micro_batch / tp, as
/// the layer's FLOPs are), x HwOptions::counted_unit_ns x the compute
/// slowdown; the optimizer step counts nothing. A counted report is the
/// same on every machine and every run: what the policy sees depends on
/// the work done, not on the machine's speed.
enum class ComputeClock { Wall, ThreadCpu, Counted };

/// Slots for ranks that share a machine's cores (threads of one process in
/// tests): a rank holds one for each compute segment (a micro-batch's layers,
/// the optimizer step; released around collectives inside them), so at most
/// as many ranks compute at once as there are slots. With one slot per core no
/// rank's compute is time-sliced against another's, and its measured time is
/// its own work, as on a device of its own.
using ComputeSlots = std::counting_semaphore<1024>;

struct HwOptions {
  ComputeClock compute_clock = ComputeClock::Wall;
  ComputeSlots* compute_slots = nullptr;  // not owned; none: ranks compute whenever they can
  OptimizerConfig optimizer;
  std::size_t dp_bucket_bytes = std::size_t{1} << 20;
  std::filesystem::path shm_root = "/dev/shm";
  std::string job = "parashift";
  /// Ranks that share a node (and its /dev/shm); 0 = all on one node. Each
  /// rank's shard is replicated on the node ranks_per_node ranks further on.
  int ranks_per_node = 0;
  /// The host whose shared memory holds this rank's shards; -1: its node,
  /// rank / ranks_per_node. A rank moved onto a spare on another host
  /// (tests/hw/contract_harness.hpp) names that host.
  int host = -1;
  int keep_snapshots = 2;  // versions kept per rank
  /// Where the layers run; not owned. None: the backend's own HostKernels.
  /// The job's communicator must carry this memory (HostKernels: host
  /// memory, any communicator; CudaKernels: NCCL on device buffers).
  DeviceKernels* kernels = nullptr;
  /// Keep the synthetic data set (each micro-batch's input and target, the
  /// same every iteration) in device memory once made, rather than making
  /// it on the host for every micro-batch. On for GPUs, where the host would
  /// be the bottleneck; off for the CPU flavour, whose calibrated prediction
  /// counts that work.
  bool resident_data = false;
  /// The task: none, the synthetic data (model/synthetic_data.hpp); set,
  /// character-level language modelling on a text (model/text_task.hpp),
  /// whose windows change every iteration (resident_data is not used).
  std::shared_ptr<const TextTask> text;
  /// Compressors whose fit to this rank's local gradients is measured
  /// (StepReport::compression_fits, what the `sync` module reads) every
  /// compression_probe_every iterations: a host copy of the gradients and,
  /// for PowerSGD, each matrix's singular values.
  std::vector<core::CompressionSpec> compression_probes;
  int compression_probe_every = 1;
  core::TimeNs counted_unit_ns = 100'000;  // ComputeClock::Counted: one unit of layer work
  /// ComputeClock::Counted only; not owned. The rank's virtual clock
  /// (hw/comm/virtual_time.hpp): its counted compute advances it, and every
  /// time the rank reports (the iteration, its groups' communication, a
  /// directive's) is read on it. The communicator the backend is built on
  /// must be a VirtualTimeCommunicator on the same clock. None: those times
  /// are the machine's.
  VirtualClock* virtual_clock = nullptr;
  /// Measure each replica's and the reduced gradient's squared norm
  /// (StepReport::gradients, what the batch module reads): a host copy of
  /// the gradients twice an iteration. Reported for dp > 1 with the
  /// replicated optimizer, flat uncompressed sync and equal micro-batches.
  bool gradient_norms = false;
  /// Fault injection: this rank sends itself SIGKILL (a real kill -9: no
  /// clean-up, its shards stay in shared memory) before this iteration;
  /// midway through a re-plan applied before it (the layers gathered, the
  /// new plan not yet built), when there is one.
  std::optional<std::int64_t> kill_before_iteration;
};

struct RestoreStats {
  long long version = -1;
  int shards_fetched = 0;  // over the job: shards that came from a replica on another node
  double bytes_fetched = 0;
  /// Restored from another plan's shards (a shrink's restore): the layers
  /// were put together whole and re-cut; bytes_fetched counts the pieces
  /// sent between ranks, shards_fetched the replicas read.
  bool resharded = false;
  /// Shard files present by name that the store refused (another job,
  /// rank, version, kind or plan; truncated; hash mismatch), any version,
  /// own or replica, as "<path>: <reason>": every rank's on rank 0, this
  /// rank's on the others. A refused own shard of the restored version is
  /// fetched from its replica, like a lost one; a version refused on both
  /// sides is not restorable.
  std::vector<std::string> refused;
};

/// A row-major matrix copied to the host.
struct HostMatrix {
  int rows = 0, cols = 0;
  std::vector<float> values;
};
/// The matrices' squared sum, then what each probe leaves out of it
/// (core::left_out_sq), summed over the matrices.
std::vector<double> compression_probe_sums(std::span<const core::CompressionSpec> probes,
                                           std::span<const HostMatrix> matrices);

/// Why the executor does not run `plan` with sequences of `seq_len` tokens
/// ("plan.<field>: ..."), or empty when it does (the plan's own validity
/// aside: ParallelPlan::problems).
std::string executor_plan_problem(const core::ParallelPlan& plan, int seq_len);

class HwBackend : public core::Backend {
 public:
  /// Collective over `world`, whose size must equal plan.gpus(). Throws
  /// core::InputError for plans the executor does not run.
  HwBackend(const core::ModelSpec& model, int seq_len, std::uint64_t seed,
            const core::ParallelPlan& plan, HwOptions options, Communicator& world);

  core::Capabilities capabilities() const override;
  /// What a job of `ranks` ranks of `model` at `seq_len` can do (what
  /// capabilities() returns), for a process that holds none of its ranks.
  static core::Capabilities capabilities_for(const core::ModelSpec& model, int seq_len, int ranks);
  /// Collective: runs one iteration; `plan` must be the plan it was built
  /// with. A communicator error in it (an MPI, NCCL or thread-group call
  /// that failed: a dead peer, a broken protocol; HwError) comes back as
  /// the report's failure {kind "comm", component "rank R", its message as
  /// detail} and the iteration does not count: the runner ends the run
  /// there, as for any failure it does not recover in process (the elastic
  /// launcher relaunches).
  core::StepReport step(const core::ParallelPlan& plan) override;
  /// The plan it runs (the last re-plan's).
  const core::ParallelPlan& plan() const { return plan_; }
  /// Collective. A re-plan to any plan the executor runs on the same ranks
  /// moves the layers' weights and Adam moments to their new owners live
  /// (core::InputError naming the field for one it does not run); remap
  /// throws std::invalid_argument (not supported).
  void apply(const core::Directive& directive) override;

  /// Fault injection: from the next step on, every compute segment of this
  /// rank (a micro-batch's forward or backward over its layers, the optimizer
  /// step) is stretched to `factor` x its time by spinning on the compute
  /// clock after it, as a throttled device would run; on the counted clock
  /// its counted work is `factor` x the units. 1 = healthy.
  void set_compute_slowdown(double factor);

  /// The iteration's loss (same on every rank).
  double last_loss() const { return last_loss_; }
  /// Iterations completed (restored with a snapshot).
  std::int64_t iterations_done() const { return iteration_; }
  /// Layers per virtual stage: pp x virtual_stages entries, chunk k of
  /// stage s holding virtual stage k*pp + s (core/pipeline_schedule.hpp).
  const std::vector<int>& layers_per_stage() const { return layers_per_stage_; }
  const std::vector<int>& micro_batches_per_replica() const { return micro_batches_; }
  /// Collective: the newest snapshot version every rank can restore.
  std::optional<long long> newest_restorable_snapshot();
  /// Collective: when some rank holds shards of this job refused only for
  /// having been written under another plan (a live re-plan's, this plan
  /// restoring nothing of them): this rank's first such refusal
  /// ("<path>: written under plan '...'"), or a note that another rank has one.
  std::optional<std::string> other_plan_snapshot();
  /// Collective: when no version of this plan is restorable, the newest
  /// version written under another plan whose every old rank's shard is on
  /// some host, own or a replica (restore() then reshards it).
  std::optional<long long> newest_resharded_snapshot();
  const RestoreStats& last_restore() const { return last_restore_; }
  /// Collective: deletes this job's snapshot shards on this node.
  void remove_snapshots();

 private:
  /// step()'s iteration, errors thrown (hw_backend_step.cpp catches them).
  core::StepReport run_step(const core::ParallelPlan& plan);
  struct LayerSlot {
    DeviceLayerTensors weights, grads;
    DeviceOptimizerState state;
  };
  struct Counters;
  struct InFlight;
  // One weight tensor and its gradient and Adam moments (shards under the
  // distributed optimizer; null for SGD).
  struct ShardTensor {
    DeviceBuffer* weights;
    DeviceBuffer* grads;
    DeviceBuffer* m;
    DeviceBuffer* v;
  };

  /// The carried sets of one layer (carried_sets' order: weights, then
  /// Adam's m and v), each tensor whole (tp 1) and row-major.
  struct WholeLayer {
    std::vector<std::array<std::vector<float>, 4>> sets;
  };

  /// The plan-dependent state for plan_ (shape, groups, sync, buffers, the
  /// even layer and micro-batch splits); the layers are the caller's.
  void setup();
  /// Collective: every rank's layers re-sharded for `plan` (hw_backend_replan.cpp).
  void replan(const core::ParallelPlan& plan);
  /// Collective: every layer's weights and moments, whole (tp 1, unsharded),
  /// from the ranks that hold them under plan_.
  std::map<int, WholeLayer> gather_whole_layers();
  // The pieces whole layers are put together from (hw_backend_replan.cpp):
  // (layer, set, tensor, tp rank, tp, first element, values), a tensor's tp
  // shard or a moment's dp shard of it.
  /// This rank's pieces of its live layers under plan_ (replica 0's weights;
  /// its moment shards under the distributed optimizer).
  std::vector<std::byte> live_pieces() const;
  /// Collective: every rank's `mine` to every rank, in rank order.
  std::vector<std::vector<std::byte>> exchange_pieces(std::vector<std::byte> mine);
  /// Whole layers from `pieces`; HwError naming the first layer a piece of
  /// which is missing ("<what>: layer L ... is on no rank").
  std::map<int, WholeLayer> assemble_whole(const std::vector<std::vector<std::byte>>& pieces,
                                           const std::string& what) const;
  /// This rank's shards of plan_'s layers, cut out of `whole` (layers_
  /// replaced; the even splits of setup()).
  void install_whole(const std::map<int, WholeLayer>& whole);
  /// Collective: restores `version` written under another plan (a shrink's
  /// restore, hw_backend_reshard.cpp): every rank's pieces of the shards on
  /// its host, own and replicas, whole layers from them, this plan's shards
  /// cut out. False when no rank holds a shard of `version` under another
  /// plan.
  bool restore_resharded(long long version);
  /// A trusted shard on this host written under another plan than plan_.
  struct OtherPlanShard {
    long long version;
    int rank;
    ShardKind kind;
    std::string plan;
    int plan_ranks;                  // its plan's tp x pp x dp
    std::vector<std::byte> payload;  // read once, hashed: what a resharding restore cuts
  };
  /// This host's shards of another plan, of version `only` or of any
  /// version.
  std::vector<OtherPlanShard> other_plan_shards(std::optional<long long> only) const;
  static constexpr std::size_t kCandidateSlots = 16;
  int host() const;
  /// What a layer slot carries to another rank or into a snapshot: its
  /// weights, and Adam's moments.
  std::vector<DeviceLayerTensors*> carried_sets(LayerSlot& slot) const;
  std::vector<const DeviceLayerTensors*> carried_sets(const LayerSlot& slot) const;
  /// The first element of this rank's piece of carried set `set`'s tensor
  /// of `local_size` elements: its dp shard's under the distributed
  /// optimizer for the moments, 0 otherwise.
  std::size_t carried_first(std::size_t set, std::size_t local_size) const;
  LayerSlot new_slot(int layer) const;
  LayerSlot blank_slot() const;                  // zeros, for weights that arrive from elsewhere
  DeviceOptimizerState optimizer_state() const;  // zero moments (this rank's shards)
  bool sharded_optimizer() const;                // distributed optimizer over dp > 1
  /// Whether this step reports gradient norms (HwOptions::gradient_norms).
  bool measures_gradient_norms() const;
  /// The squared sum of this rank's gradients (a host copy; collective-free).
  double gradient_sq_sum() const;
  /// This rank's gradient matrices, copied to the host (gradient_sync.cpp).
  std::vector<HostMatrix> host_gradients() const;
  /// StepReport::gradients from the squared sums over every rank of the
  /// local gradients (before the sync) and the reduced ones.
  core::GradientNorms gradient_norms(double local_sq_sum, double reduced_sq_sum) const;
  DeviceStash take_stash();
  DeviceOutputGrads take_grads();
  DeviceBuffer& loss_grad(std::size_t micro_batch);
  /// Global micro-batch `micro_batch`'s input (or target) in `activation_`'s
  /// shape: a resident copy, or made on the host and uploaded into `scratch`
  /// (hw_backend_data.cpp).
  const float* sample(int micro_batch, bool target, DeviceBuffer& scratch);
  /// The loss of global micro-batch `micro_batch` (the last stage's output in
  /// `activation_`), its gradient into loss_grad(slot); divided so that the
  /// iteration's `all_micro_batches` sum to the mean.
  double last_stage_loss(int micro_batch, std::size_t slot, int all_micro_batches);
  void run_pipeline(Counters& counters);
  void all_reduce_gradients(Counters& counters);
  // The distributed optimizer (hw_backend_sharding.cpp).
  std::vector<ShardTensor> shard_tensors();
  void reduce_scatter_gradients(Counters& counters);
  void update_weight_shards();
  void all_gather_weights(Counters& counters);
  float* shard_pack(const ShardBucket& bucket);  // a buffer of dp blocks
  core::StepReport make_report(const Counters& counters) const;

  void repartition(const std::vector<int>& layers_per_stage);
  void rebalance(const std::vector<int>& micro_batches);
  /// A re-plan that changes only plan.sync and plan.compression (the
  /// `sync` module's): the data-parallel sync is rebuilt, nothing moves.
  void replan_sync(const core::ParallelPlan& plan);
  /// compressed_sync_ for plan_ (none for flat uncompressed); collective over dp.
  void rebuild_sync();
  void snapshot(long long version);
  void restore(long long version);
  std::vector<std::byte> serialize() const;
  void deserialize(std::span<const std::byte> payload);
  /// Layer `layer`'s weights, optimizer state and gradient compressor state.
  void write_slot(ByteWriter& out, int layer, const LayerSlot& slot) const;
  void read_slot(ByteReader& in, int layer, LayerSlot& slot);
  /// available[r]: versions of rank r's shard that exist and are trusted
  /// (own store or its replica); `own` (when given) the trusted own ones,
  /// `refused` (when given) this rank's refused files.
  std::vector<std::vector<long long>> snapshot_table(std::vector<std::vector<long long>>* own,
                                                     std::vector<std::string>* refused);
  /// Collective: every rank's refused shard files on rank 0 (rank order),
  /// `mine` on the others.
  std::vector<std::string> gather_refused(std::vector<std::string> mine);
  int ranks_per_node() const;
  int buddy(int rank) const;  // who holds a replica of `rank`'s shard
  int ward(int rank) const;   // whose replica `rank` holds

  std::unique_ptr<DeviceKernels> own_kernels_;  // first: device buffers below free into it
  DeviceKernels* kernels_;
  core::ModelSpec model_;
  core::ParallelPlan plan_;
  std::uint64_t seed_;
  HwOptions options_;
  Communicator& world_;
  CommGroups groups_;
  std::unique_ptr<CompressedSync> compressed_sync_;  // plan.sync / plan.compression
  LayerShape shape_;
  ShardStore store_;
  std::vector<int> layers_per_stage_;
  std::vector<int> micro_batches_;
  std::map<int, LayerSlot> layers_;  // this stage's layers (all its chunks) by global index
  std::optional<DeviceWorkspace> workspace_;
  // tokens x hidden: a forward's activations, a backward's gradients, the
  // loss target; the dp bucket
  DeviceBuffer activation_, gradient_, target_, dp_bucket_;
  std::vector<DeviceStash> free_stash_;        // reused by later micro-batches
  std::vector<DeviceOutputGrads> free_grads_;  // likewise (ZB-H1's B to W)
  std::vector<ShardBucket> shard_buckets_;     // this iteration's, distributed optimizer
  DeviceBuffer shard_block_, shard_pack_;      // this rank's shard of every bucket; dp blocks
  std::vector<DeviceBuffer> loss_grad_;        // per micro-batch, last stage
  std::map<int, DeviceBuffer> resident_inputs_, resident_targets_;  // by global micro-batch
  Matrix text_embedding_;  // options_.text's frozen embedding (vocab x hidden), when set
  core::TimeNs compute_now_ns() const;
  core::TimeNs counted_ns(double units) const;  // ComputeClock::Counted
  /// Spins until `segment_ns` x (slowdown - 1) more compute-clock time has passed.
  void stretch(core::TimeNs segment_ns) const;

  // Rings in another order (hw_backend_rings.cpp): under virtual time,
  // where every rank-to-rank link has its rate and its ledger.
  VirtualTimeCommunicator* virtual_world_ = nullptr;  // world_, when it is one
  std::vector<std::vector<int>> dp_orders_;  // by dp group (stage); empty: replicas in order
  core::Capabilities::RingRoutes ring_routes() const;
  void reorder(const core::ReorderDirective& directive);
  /// This rank's outgoing links' use this step, packed (edge_fields() per world rank).
  std::vector<double> pack_edges() const;
  std::size_t edge_fields() const;
  /// The links every rank's packed use names, as StepReport::links.
  std::vector<core::LinkTelemetry> links_of(const std::vector<double>& all, std::size_t stride,
                                            std::size_t offset, core::TimeNs iteration_ns) const;

  std::int64_t iteration_ = 0;
  bool warm_ = false;  // a step has run since construction or the last restore
  double slowdown_ = 1.0;
  double last_loss_ = 0;
  core::TimeNs applied_ns_ = 0;             // directives' wall time since the last step
  std::vector<core::AppliedCost> applied_;  // ... each one's, its slowest rank's
  RestoreStats last_restore_;
};

}  // namespace parashift::hw
