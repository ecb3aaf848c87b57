// HwBackend's live re-plan: which plans the executor runs, and a change of
// tp, pp, dp, the schedule, the optimizer's sharding, the micro-batch or
// the global batch between iterations on the same ranks. Every layer's
// weights and Adam moments are gathered whole (tp 1, unsharded) from the
// ranks that hold them, the plan-dependent state is rebuilt (groups,
// buffers, even layer and micro-batch splits), and each rank cuts its new
// shards out of the whole layers: the same bits in new places, so a re-plan
// before the first iteration trains exactly as the new plan from the start,
// and a re-plan there and back again changes nothing.
//
// Simple, not scalable: every rank receives the whole model's state (three
// times the weights under Adam), point to point from every other rank, which
// suits the executor's synthetic models, not a 70B one (a real one would
// send each shard only to its new owners). A compressed or hierarchical
// sync starts its error-feedback state over.
#include <algorithm>
#include <array>
#include <csignal>
#include <map>
#include <string>
#include <vector>

#include <unistd.h>

#include "core/input_error.hpp"
#include "core/pipeline_schedule.hpp"
#include "core/work_split.hpp"
#include "hw/exec/hw_backend.hpp"
#include "hw/hw_error.hpp"
#include "hw/snapshot/byte_stream.hpp"

namespace parashift::hw {

namespace {

constexpr int kReplanTag = 31'003;  // on the job's group (hw_backend_directives.cpp's tags)

}  // namespace

std::string executor_plan_problem(const core::ParallelPlan& plan, int seq_len) {
  const std::string tail = " (the hw executor does not run it)";
  if (plan.cp != 1)
    return "plan.cp: context parallelism, found cp=" + std::to_string(plan.cp) + tail;
  if (plan.virtual_stages != 1 && plan.pp == 1)
    return "plan.virtual_stages: interleaving needs pp > 1, found pp=1 virtual_stages=" +
           std::to_string(plan.virtual_stages) + tail;
  // ZB-H1's weight pass comes long after its input-gradient pass, and full
  // recompute keeps the activations it needs only until the next layer's.
  if (plan.recompute == core::Recompute::Full && plan.schedule == core::Schedule::ZeroBubbleH1)
    return "plan.recompute: full with schedule zb_h1 (its weight passes would need the whole "
           "forward again); expected none or selective" +
           tail;
  if (plan.recompute == core::Recompute::Full && plan.recompute_layers > 0)
    return "plan.recompute_layers: recomputing " + std::to_string(plan.recompute_layers) +
           " layers of each stage; expected every layer (leave recompute_layers out)" + tail;
  if (plan.optimizer_sharding == core::OptimizerSharding::Fsdp)
    return "plan.optimizer_sharding: expected none or distributed, found fsdp" + tail;
  const long long tokens = static_cast<long long>(seq_len) * plan.micro_batch;
  if (plan.sequence_parallel && plan.tp > 0 && tokens % plan.tp != 0)
    return "plan.sequence_parallel: the " + std::to_string(tokens) +
           " tokens of a micro-batch do not split over tp=" + std::to_string(plan.tp) + tail;
  return "";
}

core::Capabilities HwBackend::capabilities() const {
  core::Capabilities caps = capabilities_for(model_, shape_.seq_len, world_.size());
  caps.link_telemetry = virtual_world_ != nullptr;  // hw_backend_rings.cpp
  caps.ring_routes = ring_routes();
  return caps;
}

core::Capabilities HwBackend::capabilities_for(const core::ModelSpec& model, int seq_len,
                                               int ranks) {
  core::Capabilities caps;
  caps.live_repartition = true;
  caps.snapshots_to_host = true;
  caps.live_replan = true;
  caps.ranks = ranks;
  caps.runs_plan = [model, seq_len, ranks](const core::ParallelPlan& plan) {
    return executor_plan_problem(plan, seq_len).empty() &&
           plan.problems(model, seq_len, ranks).empty();
  };
  return caps;
}

namespace {

// carried_sets for a const or a mutable slot: its weights, and Adam's moments.
template <class Slot>
auto carried_of(Slot& slot, bool adam) {
  std::vector<decltype(&slot.weights)> sets{&slot.weights};
  if (adam) {
    sets.push_back(&slot.state.m);
    sets.push_back(&slot.state.v);
  }
  return sets;
}

}  // namespace

std::vector<DeviceLayerTensors*> HwBackend::carried_sets(LayerSlot& slot) const {
  return carried_of(slot, options_.optimizer.kind == OptimizerKind::Adam);
}

std::vector<const DeviceLayerTensors*> HwBackend::carried_sets(const LayerSlot& slot) const {
  return carried_of(slot, options_.optimizer.kind == OptimizerKind::Adam);
}

std::size_t HwBackend::carried_first(std::size_t set, std::size_t local_size) const {
  return set > 0 && sharded_optimizer() ? shard_of(local_size, plan_.dp, groups_.coord.dp).begin
                                        : 0;
}

std::vector<std::byte> HwBackend::live_pieces() const {
  // This rank's pieces: its tp shard of each weight tensor (replica 0's:
  // every replica holds the same), and of each moment (its dp shard of it
  // under the distributed optimizer, replica 0's otherwise).
  const bool sharded = sharded_optimizer();
  const int dp_rank = groups_.coord.dp, tp_rank = groups_.coord.tp;
  const auto local_sizes = layer_tensor_sizes(shape_);
  ByteWriter out;
  std::vector<float> host;
  for (const auto& [index, slot] : layers_) {
    const auto sets = carried_sets(slot);
    for (std::size_t set = 0; set < sets.size(); ++set) {
      const bool moments = set > 0;
      if (dp_rank != 0 && !(moments && sharded)) continue;
      const auto tensors = sets[set]->all();
      for (std::size_t t = 0; t < tensors.size(); ++t) {
        const std::size_t first = carried_first(set, local_sizes[t]);
        host.resize(tensors[t]->size());
        kernels_->download(tensors[t]->data(), host);
        out.ints({index, static_cast<int>(set), static_cast<int>(t), tp_rank, plan_.tp});
        out.i64(static_cast<std::int64_t>(first));
        out.floats(host);
      }
    }
  }
  return out.bytes();
}

std::vector<std::vector<std::byte>> HwBackend::exchange_pieces(std::vector<std::byte> mine) {
  // Round k sends to rank + k and takes from rank - k (a permutation, so
  // rendezvous transports pair up too).
  const int n = world_.size(), me = world_.rank();
  std::vector<std::vector<std::byte>> pieces(static_cast<std::size_t>(n));
  pieces[static_cast<std::size_t>(me)] = std::move(mine);
  for (int k = 1; k < n; ++k) {
    world_.send_bytes(pieces[static_cast<std::size_t>(me)], (me + k) % n, kReplanTag);
    const int from = (me - k + n) % n;
    pieces[static_cast<std::size_t>(from)] = world_.recv_bytes(from, kReplanTag);
    world_.flush_sends();
  }
  return pieces;
}

std::map<int, HwBackend::WholeLayer> HwBackend::assemble_whole(
    const std::vector<std::vector<std::byte>>& pieces, const std::string& what) const {
  LayerShape whole_shape = shape_;
  whole_shape.tp = 1;
  const auto whole_sizes = layer_tensor_sizes(whole_shape);
  const std::size_t set_count = options_.optimizer.kind == OptimizerKind::Adam ? 3 : 1;
  std::map<int, WholeLayer> whole;
  std::map<int, std::vector<std::array<std::vector<bool>, 4>>> filled;
  for (int l = 0; l < model_.layers; ++l) {
    whole[l].sets.resize(set_count);
    filled[l].resize(set_count);
    for (std::size_t set = 0; set < set_count; ++set)
      for (std::size_t t = 0; t < 4; ++t) {
        whole[l].sets[set][t].assign(whole_sizes[t], 0.0f);
        filled[l][set][t].assign(whole_sizes[t], false);
      }
  }
  for (const auto& bytes : pieces) {
    ByteReader in(bytes);
    while (!in.done()) {
      const std::vector<int> key = in.ints();
      const auto first = static_cast<std::size_t>(in.i64());
      const std::vector<float> values = in.float_vector();
      if (key.size() != 5 || whole.count(key[0]) == 0 || key[1] < 0 ||
          static_cast<std::size_t>(key[1]) >= set_count || key[2] < 0 || key[2] > 3 || key[4] < 1 ||
          key[3] < 0 || key[3] >= key[4])
        throw HwError(what + ": a malformed piece of layer state");
      LayerShape piece_shape = shape_;
      piece_shape.tp = key[4];
      const auto set = static_cast<std::size_t>(key[1]), t = static_cast<std::size_t>(key[2]);
      auto& into = whole[key[0]].sets[set][t];
      auto& mask = filled[key[0]][set][t];
      for (std::size_t i = 0; i < values.size(); ++i) {
        const std::size_t at = tp_whole_index(piece_shape, key[2], key[3], first + i);
        into.at(at) = values[i];
        mask[at] = true;
      }
    }
  }
  static constexpr std::array<const char*, 3> kSetNames{"weights", "Adam m", "Adam v"};
  for (const auto& [l, sets] : filled)
    for (std::size_t set = 0; set < sets.size(); ++set)
      for (const auto& mask : sets[set])
        if (std::find(mask.begin(), mask.end(), false) != mask.end())
          throw HwError(what + ": part of layer " + std::to_string(l) + "'s " + kSetNames[set] +
                        " is on no rank");
  return whole;
}

std::map<int, HwBackend::WholeLayer> HwBackend::gather_whole_layers() {
  return assemble_whole(exchange_pieces(live_pieces()), "re-plan");
}

void HwBackend::install_whole(const std::map<int, WholeLayer>& whole) {
  // This rank's shards of its stage's layers, cut out of the whole ones.
  layers_.clear();
  const auto local_sizes = layer_tensor_sizes(shape_);
  const std::vector<int> offsets = core::offsets_of(layers_per_stage_);
  std::vector<float> host;
  for (int chunk = 0; chunk < plan_.virtual_stages; ++chunk) {
    const auto g = static_cast<std::size_t>(core::virtual_stage(plan_.pp, groups_.coord.pp, chunk));
    for (int l = offsets[g]; l < offsets[g + 1]; ++l) {
      LayerSlot slot = blank_slot();
      const auto sets = carried_sets(slot);
      for (std::size_t set = 0; set < sets.size(); ++set) {
        const auto tensors = sets[set]->all();
        for (std::size_t t = 0; t < tensors.size(); ++t) {
          const std::size_t first = carried_first(set, local_sizes[t]);
          const auto& from = whole.at(l).sets[set][t];
          host.resize(tensors[t]->size());
          for (std::size_t i = 0; i < host.size(); ++i)
            host[i] =
                from[tp_whole_index(shape_, static_cast<int>(t), groups_.coord.tp, first + i)];
          kernels_->upload(host, tensors[t]->data());
        }
      }
      layers_.emplace(l, std::move(slot));
    }
  }
}

void HwBackend::replan(const core::ParallelPlan& plan) {
  core::ParallelPlan same = plan;
  same.sync = plan_.sync;
  same.compression = plan_.compression;
  if (same.label() == plan_.label() && same.global_batch == plan_.global_batch)
    return replan_sync(plan);
  if (plan.gpus() != world_.size())
    throw core::InputError("re-plan to " + plan.label() +
                           ": tp*pp*dp*cp=" + std::to_string(plan.gpus()) +
                           " ranks, but the job has " + std::to_string(world_.size()));
  if (const std::string problem = executor_plan_problem(plan, shape_.seq_len); !problem.empty())
    throw core::InputError("re-plan to " + plan.label() + ": " + problem);
  plan.validate(model_, shape_.seq_len, world_.size());
  const std::map<int, WholeLayer> whole = gather_whole_layers();
  if (options_.kill_before_iteration == iteration_)
    ::kill(::getpid(), SIGKILL);  // fault injection: a rank dies mid-re-plan
  // The old plan's state goes before the new one is built on the same ranks.
  compressed_sync_.reset();
  layers_.clear();
  free_stash_.clear();
  free_grads_.clear();
  loss_grad_.clear();
  resident_inputs_.clear();
  resident_targets_.clear();
  shard_buckets_.clear();
  shard_block_ = DeviceBuffer();
  shard_pack_ = DeviceBuffer();
  dp_bucket_ = DeviceBuffer();
  plan_ = plan;
  setup();
  install_whole(whole);
  // Snapshots are written under the new plan's name from now on.
  store_ = ShardStore(options_.shm_root, options_.job, host(), plan_.label());
  warm_ = false;
  kernels_->synchronize();
  world_.barrier();
}

}  // namespace parashift::hw
