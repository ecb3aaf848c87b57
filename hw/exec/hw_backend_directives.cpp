// HwBackend's directives: repartition and rebalance between iterations,
// snapshot to node shared memory and restore from it.
#include <algorithm>
#include <array>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <variant>

#include "core/input_error.hpp"
#include "core/plan_json.hpp"
#include "core/work_split.hpp"
#include "hw/exec/hw_backend.hpp"

#include "hw/device/host_kernels.hpp"
#include "hw/exec/step_counters.hpp"
#include "hw/hw_error.hpp"
#include "hw/snapshot/byte_stream.hpp"
#include "hw/snapshot/snapshot_plan.hpp"

namespace parashift::hw {

namespace {

// Tags on the pipeline group (layer moves) and on the job's group (shards),
// below MPI's guaranteed MPI_TAG_UB of 32767.
constexpr int kLayerMoveTag = 20'000;  // + global layer index
constexpr int kReplicaTag = 31'000;
constexpr int kFetchTag = 31'001;
constexpr int kRefusedTag = 31'002;
constexpr std::size_t kVersionSlots = 16;  // versions per rank and kind exchanged at restore

// The pipeline stage that holds `layer` when virtual stage g has layers
// offsets[g]..offsets[g+1]: stage g mod pp (chunk g / pp there).
int stage_of(const std::vector<int>& offsets, int layer, int pp) {
  const auto it = std::upper_bound(offsets.begin(), offsets.end(), layer);
  return (static_cast<int>(it - offsets.begin()) - 1) % pp;
}

}  // namespace

void HwBackend::apply(const core::Directive& directive) {
  // Its wall time is charged to the next iteration, as the simulator
  // charges a move, a snapshot's copy or a re-plan's switch.
  const core::TimeNs start = now_ns(options_.virtual_clock);
  std::visit(
      [this](const auto& action) {
        using T = std::decay_t<decltype(action)>;
        if constexpr (std::is_same_v<T, core::RepartitionDirective>) {
          repartition(action.layers_per_stage);
        } else if constexpr (std::is_same_v<T, core::RebalanceDirective>) {
          rebalance(action.micro_batches);
        } else if constexpr (std::is_same_v<T, core::SnapshotDirective>) {
          snapshot(action.version);
        } else if constexpr (std::is_same_v<T, core::RestoreDirective>) {
          restore(action.version);
        } else if constexpr (std::is_same_v<T, core::ReplanDirective>) {
          replan(action.plan);
        } else if constexpr (std::is_same_v<T, core::ReorderDirective>) {
          reorder(action);
        } else {
          throw std::invalid_argument(std::string("hw backend: ") + core::kind_name(action) +
                                      " is not supported");
        }
      },
      directive.action);
  // Every rank applies the same directives in the same order; each one's
  // time is its slowest rank's, so that every rank reports (and decides on)
  // the same figure.
  const core::TimeNs elapsed_ns = now_ns(options_.virtual_clock) - start;
  applied_ns_ += elapsed_ns;
  const std::array<double, 1> mine{static_cast<double>(elapsed_ns)};
  const std::vector<double> all = world_.all_gather(std::span<const double>(mine));
  applied_.push_back({core::kind_name(directive.action),
                      static_cast<core::TimeNs>(*std::max_element(all.begin(), all.end()))});
}

void HwBackend::replan_sync(const core::ParallelPlan& plan) {
  if (plan.sync == plan_.sync && plan.compression == plan_.compression) return;
  plan_.sync = plan.sync;
  plan_.compression = plan.compression;
  rebuild_sync();
}

void HwBackend::rebuild_sync() {
  compressed_sync_.reset();
  if (plan_.sync == core::SyncMode::Flat && !plan_.compression.enabled()) return;
  if (dynamic_cast<HostKernels*>(kernels_) == nullptr)
    throw core::InputError("plan.sync / plan.compression: the " + kernels_->name() +
                           " executor does not run them (host memory only; expected sync: "
                           "flat, compression: none)");
  compressed_sync_ = std::make_unique<CompressedSync>(plan_, *groups_.dp, world_.rank(),
                                                      options_.ranks_per_node, seed_);
}

void HwBackend::repartition(const std::vector<int>& counts) {
  core::check_split(counts, plan_.pp * plan_.virtual_stages, model_.layers, 1,
                    "repartition layers_per_stage");
  const auto old_offsets = core::offsets_of(layers_per_stage_);
  const auto new_offsets = core::offsets_of(counts);
  const int stage = groups_.coord.pp;
  Communicator& pp = *groups_.pp;
  // Every moving layer goes from its old stage to its new one, between the
  // members with the same tp rank and replica: weights and optimizer state.
  std::vector<int> sent;
  for (int l = 0; l < model_.layers; ++l) {
    const int from = stage_of(old_offsets, l, plan_.pp), to = stage_of(new_offsets, l, plan_.pp);
    if (from == to || from != stage) continue;
    ByteWriter out;
    write_slot(out, l, layers_.at(l));
    pp.send_bytes(out.bytes(), to, kLayerMoveTag + l);
    sent.push_back(l);
  }
  for (int l = 0; l < model_.layers; ++l) {
    const int from = stage_of(old_offsets, l, plan_.pp), to = stage_of(new_offsets, l, plan_.pp);
    if (from == to || to != stage) continue;
    const auto bytes = pp.recv_bytes(from, kLayerMoveTag + l);
    LayerSlot slot = blank_slot();
    ByteReader in(bytes);
    read_slot(in, l, slot);
    layers_.emplace(l, std::move(slot));
  }
  pp.flush_sends();
  for (int l : sent) layers_.erase(l);
  layers_per_stage_ = counts;
}

void HwBackend::rebalance(const std::vector<int>& counts) {
  const int total = std::accumulate(micro_batches_.begin(), micro_batches_.end(), 0);
  core::check_split(counts, plan_.dp, total, 1, "rebalance micro_batches");
  // Interleaved 1F1B cycles through its chunks in groups of pp micro-batches.
  if (plan_.virtual_stages > 1)
    for (int m : counts)
      if (m % plan_.pp != 0)
        throw core::InputError("rebalance micro_batches: interleaved 1F1B needs multiples of pp=" +
                               std::to_string(plan_.pp) + ", found " +
                               core::format_int_list(counts));
  micro_batches_ = counts;
}

// A slot's weights and optimizer moments travel through host memory: down
// from the device, into the byte stream, and back up on the other side.
// (Buffer by buffer: the moments are this rank's shards under the
// distributed optimizer, and a layer moves between ranks of the same dp
// coordinate, which hold the same shards.)
void HwBackend::write_slot(ByteWriter& out, int layer, const LayerSlot& slot) const {
  for (const DeviceLayerTensors* set : carried_sets(slot))
    for (const DeviceBuffer* b : set->all()) {
      std::vector<float> host(b->size());
      kernels_->download(b->data(), host);
      out.floats(host);
    }
  // The sync's state of the layer's four matrices (error feedback,
  // PowerSGD's Q, a delayed sync's pending gradient): none (0) without a
  // compressed or hierarchical sync.
  out.i64(compressed_sync_ ? 4 : 0);
  if (!compressed_sync_) return;
  for (int j = 0; j < 4; ++j) {
    const core::CompressorState s = compressed_sync_->compressor().state(layer * 4 + j);
    out.floats(s.residual);
    out.floats(s.q);
    out.floats(s.shard_residual);
    out.floats(s.pending);
  }
}

void HwBackend::read_slot(ByteReader& in, int layer, LayerSlot& slot) {
  for (DeviceLayerTensors* set : carried_sets(slot))
    for (DeviceBuffer* b : set->all()) {
      std::vector<float> host(b->size());
      in.floats(host);  // checks the length
      kernels_->upload(host, b->data());
    }
  const std::int64_t tensors = in.i64();
  if (tensors != 0 && tensors != 4)
    throw HwError("shard payload: " + std::to_string(tensors) +
                  " compressor states for a layer, expected 0 or 4");
  if (tensors == 0 && compressed_sync_)  // written before this sync: start it over
    for (int j = 0; j < 4; ++j) compressed_sync_->compressor().set_state(layer * 4 + j, {});
  for (int j = 0; j < tensors; ++j) {
    core::CompressorState s;
    s.residual = in.float_vector();
    s.q = in.float_vector();
    s.shard_residual = in.float_vector();
    s.pending = in.float_vector();
    // Written under another sync (a re-plan since): the state is dropped.
    if (compressed_sync_) compressed_sync_->compressor().set_state(layer * 4 + j, std::move(s));
  }
}

// Payload: iteration, tp, pp, dp, virtual stages, optimizer, its sharding,
// rank order, layers per virtual stage, micro-batches
// per replica, then this rank's layers (index, weights, optimizer state).
std::vector<std::byte> HwBackend::serialize() const {
  ByteWriter out;
  out.i64(iteration_);
  out.ints({plan_.tp, plan_.pp, plan_.dp, plan_.virtual_stages,
            static_cast<int>(options_.optimizer.kind), static_cast<int>(plan_.optimizer_sharding),
            static_cast<int>(plan_.order)});
  out.ints(layers_per_stage_);
  out.ints(micro_batches_);
  out.i64(static_cast<std::int64_t>(layers_.size()));
  for (const auto& [index, slot] : layers_) {
    out.i64(index);
    write_slot(out, index, slot);
  }
  return out.bytes();
}

void HwBackend::deserialize(std::span<const std::byte> payload) {
  ByteReader in(payload);
  const std::int64_t iteration = in.i64();
  const std::vector<int> expected{plan_.tp,
                                  plan_.pp,
                                  plan_.dp,
                                  plan_.virtual_stages,
                                  static_cast<int>(options_.optimizer.kind),
                                  static_cast<int>(plan_.optimizer_sharding),
                                  static_cast<int>(plan_.order)};
  if (in.ints() != expected)
    throw HwError("snapshot shard was written under another plan or optimizer than " +
                  plan_.label() + " " + to_string(options_.optimizer.kind));
  std::vector<int> layers_per_stage = in.ints();
  std::vector<int> micro_batches = in.ints();
  std::map<int, LayerSlot> layers;
  const std::int64_t count = in.i64();
  for (std::int64_t i = 0; i < count; ++i) {
    const int index = static_cast<int>(in.i64());
    LayerSlot slot = blank_slot();
    read_slot(in, index, slot);
    layers.emplace(index, std::move(slot));
  }
  if (!in.done()) throw HwError("snapshot shard has trailing bytes");
  iteration_ = iteration;
  layers_per_stage_ = std::move(layers_per_stage);
  micro_batches_ = std::move(micro_batches);
  layers_ = std::move(layers);
}

int HwBackend::ranks_per_node() const {
  const int n = options_.ranks_per_node;
  return n <= 0 || n > world_.size() ? world_.size() : n;
}

int HwBackend::buddy(int rank) const {
  return (rank + ranks_per_node()) % world_.size();
}

int HwBackend::ward(int rank) const {
  return (rank - ranks_per_node() + world_.size()) % world_.size();
}

void HwBackend::snapshot(long long version) {
  const int me = world_.rank();
  const auto payload = serialize();
  store_.write(me, version, ShardKind::Own, payload);
  // A copy on the next node survives the loss of this one (no copy when
  // the whole job is one node: its shared memory is the single point of failure).
  if (buddy(me) != me) {
    world_.send_bytes(payload, buddy(me), kReplicaTag);
    const auto replica = world_.recv_bytes(ward(me), kReplicaTag);
    store_.write(ward(me), version, ShardKind::Replica, replica);
    world_.flush_sends();
    store_.prune(ward(me), ShardKind::Replica, options_.keep_snapshots);
  }
  store_.prune(me, ShardKind::Own, options_.keep_snapshots);
  world_.barrier();  // the version is complete everywhere before training goes on
  // Its plan, for a relaunch after a live re-plan (snapshot_plan.hpp).
  if (me == 0) write_snapshot_plan(options_.shm_root, options_.job, core::plan_overrides(plan_));
}

std::vector<std::vector<long long>> HwBackend::snapshot_table(
    std::vector<std::vector<long long>>* own_out, std::vector<std::string>* refused) {
  const int me = world_.rank();
  std::vector<double> row(2 * kVersionSlots, -1.0);
  auto put = [&row](std::vector<long long> versions, std::size_t at) {
    for (std::size_t i = 0; i < std::min(versions.size(), kVersionSlots); ++i)
      row[at + i] = static_cast<double>(versions[i]);
  };
  // Only trusted shards count: one of another job or plan, torn or tampered
  // is as good as lost, so its replica (or an older version) is used.
  put(store_.trusted_versions(me, ShardKind::Own, refused), 0);
  if (buddy(me) != me)
    put(store_.trusted_versions(ward(me), ShardKind::Replica, refused), kVersionSlots);
  const auto all = world_.all_gather(row);
  const int n = world_.size();
  std::vector<std::vector<long long>> own(static_cast<std::size_t>(n)), available(own.size());
  auto read = [&](int rank, std::size_t at, std::vector<long long>& into) {
    for (std::size_t i = 0; i < kVersionSlots; ++i) {
      const double v = all[static_cast<std::size_t>(rank) * row.size() + at + i];
      if (v >= 0) into.push_back(static_cast<long long>(v));
    }
  };
  for (int r = 0; r < n; ++r) {
    read(r, 0, own[static_cast<std::size_t>(r)]);
    available[static_cast<std::size_t>(r)] = own[static_cast<std::size_t>(r)];
    // Rank r's replica lives with buddy(r), in the slots buddy(r) fills for its ward.
    if (buddy(r) != r) read(buddy(r), kVersionSlots, available[static_cast<std::size_t>(r)]);
  }
  if (own_out) *own_out = std::move(own);
  return available;
}

std::optional<std::string> HwBackend::other_plan_snapshot() {
  std::vector<std::string> refused;
  snapshot_table(nullptr, &refused);
  const auto mine = std::find_if(refused.begin(), refused.end(), [](const std::string& line) {
    return line.find(": written under plan '") != std::string::npos;
  });
  double any = mine != refused.end() ? 1.0 : 0.0;
  world_.all_reduce_max(std::span<double>(&any, 1));
  if (any == 0) return std::nullopt;
  return mine != refused.end() ? *mine : std::string("(on another rank)");
}

std::optional<long long> HwBackend::newest_restorable_snapshot() {
  return newest_common_version(snapshot_table(nullptr, nullptr));
}

void HwBackend::restore(long long version) {
  std::vector<std::vector<long long>> own;
  std::vector<std::string> refused;
  const auto available = snapshot_table(&own, &refused);
  auto has = [version](const std::vector<long long>& list) {
    return std::find(list.begin(), list.end(), version) != list.end();
  };
  const int me = world_.rank();
  RestoreStats stats;
  stats.version = version;
  for (int r = 0; r < world_.size(); ++r) {
    // (Every rank reads the same table: all take this turn or none.)
    if (!has(available[static_cast<std::size_t>(r)]) && restore_resharded(version)) return;
    if (!has(available[static_cast<std::size_t>(r)]))
      throw HwError("snapshot version " + std::to_string(version) + " cannot be restored: rank " +
                    std::to_string(r) + "'s shard is on no node");
    if (!has(own[static_cast<std::size_t>(r)])) ++stats.shards_fetched;
  }
  // Only lost shards travel: the holder of a replica sends it to its owner.
  const int w = ward(me);
  if (buddy(me) != me && !has(own[static_cast<std::size_t>(w)])) {
    const auto replica = store_.read(w, version, ShardKind::Replica);
    if (!replica)
      throw HwError("replica of rank " + std::to_string(w) + " version " + std::to_string(version) +
                    " is torn");
    world_.send_bytes(*replica, w, kFetchTag);
  }
  std::vector<std::byte> payload;
  if (has(own[static_cast<std::size_t>(me)])) {
    auto local = store_.read(me, version, ShardKind::Own);
    if (!local)
      throw HwError("snapshot shard " + store_.path_of(me, version, ShardKind::Own).string() +
                    " is torn or fails its checksum");
    payload = std::move(*local);
  } else {
    payload = world_.recv_bytes(buddy(me), kFetchTag);
    store_.write(me, version, ShardKind::Own, payload);  // protected again on this node
  }
  world_.flush_sends();
  double fetched =
      has(own[static_cast<std::size_t>(me)]) ? 0.0 : static_cast<double>(payload.size());
  world_.all_reduce_sum(std::span<double>(&fetched, 1));
  stats.bytes_fetched = fetched;
  stats.refused = gather_refused(std::move(refused));
  deserialize(payload);
  last_restore_ = stats;
  world_.barrier();
}

std::vector<std::string> HwBackend::gather_refused(std::vector<std::string> mine) {
  if (world_.rank() != 0) {
    std::string joined;
    for (const auto& line : mine) joined += line + '\n';
    world_.send_bytes(std::as_bytes(std::span(joined)), 0, kRefusedTag);
    world_.flush_sends();
    return mine;
  }
  for (int r = 1; r < world_.size(); ++r) {
    const auto bytes = world_.recv_bytes(r, kRefusedTag);
    const std::string joined(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    for (std::size_t at = 0, end; (end = joined.find('\n', at)) != std::string::npos; at = end + 1)
      mine.push_back(joined.substr(at, end - at));
  }
  return mine;
}

void HwBackend::remove_snapshots() {
  world_.barrier();
  if (world_.rank() % ranks_per_node() == 0) {
    std::error_code ec;
    std::filesystem::remove_all(store_.node_dir(), ec);
  }
  world_.barrier();
  if (world_.rank() == 0) {
    std::error_code ec;
    std::filesystem::remove(snapshot_plan_path(options_.shm_root, options_.job), ec);
    std::filesystem::remove(ShardStore::job_dir(options_.shm_root, options_.job), ec);  // if empty
  }
}

}  // namespace parashift::hw
