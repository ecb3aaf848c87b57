// The executor on real hardware as a core::Backend: one process per rank
// runs real iterations of the synthetic transformer (model/layer.hpp) shaped
// by the ModelSpec and plan: 1F1B pipeline with activations sent between
// stages, tensor-parallel all-reduces, bucketed data-parallel gradient
// all-reduce, SGD or Adam on real buffers. Directives between iterations move
// real layer buffers between stages (repartition), change micro-batches per
// replica (rebalance), write snapshot shards to node shared memory and
// restore from them, fetching only the shards a node lost.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <semaphore>
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "core/model_spec.hpp"
#include "hw/comm/communicator.hpp"
#include "hw/exec/comm_groups.hpp"
#include "hw/model/optimizer.hpp"
#include "hw/snapshot/shard_store.hpp"

namespace parashift::hw {

class ByteWriter;
class ByteReader;

/// How a rank's compute time is measured: wall time, or this thread's CPU
/// time (ranks that share cores, e.g. threads of one process in tests, see
/// only their own work; waits in collectives are not compute either way).
enum class ComputeClock { Wall, ThreadCpu };

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
  int keep_snapshots = 2;  // versions kept per rank
};

struct RestoreStats {
  long long version = -1;
  int shards_fetched = 0;  // over the job: shards that came from a replica on another node
  double bytes_fetched = 0;
};

class HwBackend : public core::Backend {
 public:
  /// Collective over `world`, whose size must equal plan.gpus(). Throws
  /// core::InputError for plans the executor does not run.
  HwBackend(const core::ModelSpec& model, int seq_len, std::uint64_t seed,
            const core::ParallelPlan& plan, HwOptions options, Communicator& world);

  core::Capabilities capabilities() const override;
  /// Collective: runs one iteration; `plan` must be the plan it was built with.
  core::StepReport step(const core::ParallelPlan& plan) override;
  /// Collective. Replan and remap throw std::invalid_argument (not supported).
  void apply(const core::Directive& directive) override;

  /// Fault injection: from the next step on, every compute segment of this
  /// rank (a micro-batch's forward or backward over its layers, the optimizer
  /// step) is stretched to `factor` x its time by spinning on the compute
  /// clock after it, as a throttled device would run. 1 = healthy.
  void set_compute_slowdown(double factor);

  /// The iteration's loss (same on every rank).
  double last_loss() const { return last_loss_; }
  /// Iterations completed (restored with a snapshot).
  std::int64_t iterations_done() const { return iteration_; }
  const std::vector<int>& layers_per_stage() const { return layers_per_stage_; }
  const std::vector<int>& micro_batches_per_replica() const { return micro_batches_; }
  /// Collective: the newest snapshot version every rank can restore.
  std::optional<long long> newest_restorable_snapshot();
  const RestoreStats& last_restore() const { return last_restore_; }
  /// Collective: deletes this job's snapshot shards on this node.
  void remove_snapshots();

 private:
  struct LayerSlot {
    LayerTensors weights, grads;
    OptimizerState state;
  };
  struct Counters;

  int stage_first_layer() const;
  LayerSlot new_slot(int layer) const;
  void run_pipeline(Counters& counters);
  void all_reduce_gradients(Counters& counters);
  core::StepReport make_report(const Counters& counters) const;

  void repartition(const std::vector<int>& layers_per_stage);
  void rebalance(const std::vector<int>& micro_batches);
  void snapshot(long long version);
  void restore(long long version);
  std::vector<std::byte> serialize() const;
  void deserialize(std::span<const std::byte> payload);
  void write_slot(ByteWriter& out, const LayerSlot& slot) const;
  void read_slot(ByteReader& in, LayerSlot& slot) const;
  /// available[r]: versions of rank r's shard that exist (own store or its replica).
  std::vector<std::vector<long long>> snapshot_table(std::vector<std::vector<long long>>* own);
  int ranks_per_node() const;
  int buddy(int rank) const;  // who holds a replica of `rank`'s shard
  int ward(int rank) const;   // whose replica `rank` holds

  core::ModelSpec model_;
  core::ParallelPlan plan_;
  std::uint64_t seed_;
  HwOptions options_;
  Communicator& world_;
  CommGroups groups_;
  LayerShape shape_;
  ShardStore store_;
  std::vector<int> layers_per_stage_;
  std::vector<int> micro_batches_;
  std::map<int, LayerSlot> layers_;  // this stage's layers by global index
  core::TimeNs compute_now_ns() const;
  /// Spins until `segment_ns` x (slowdown - 1) more compute-clock time has passed.
  void stretch(core::TimeNs segment_ns) const;

  std::int64_t iteration_ = 0;
  double slowdown_ = 1.0;
  double last_loss_ = 0;
  RestoreStats last_restore_;
};

}  // namespace parashift::hw
