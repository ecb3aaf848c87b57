// HwBackend's restore of a snapshot written under another plan: after a
// shrink (a replica dropped because a GPU failed with no spare left), the
// surviving ranks run a smaller plan, and the newest snapshot is the old
// plan's. Each rank reads the old plan's shards its host holds, its own and
// the replicas it keeps for another, cuts them into the re-plan's pieces
// (hw_backend_replan.cpp), and the ranks put whole layers together from
// everyone's pieces and cut this plan's shards out of them: a resharding
// restore, as torch.distributed.checkpoint loads a checkpoint into another
// layout. The same bits land in new places; a part of a layer that no
// surviving host holds is an error naming the layer.
#include <algorithm>
#include <array>
#include <span>
#include <string>
#include <vector>

#include "core/rank_layout.hpp"
#include "hw/exec/hw_backend.hpp"
#include "hw/hw_error.hpp"
#include "hw/model/dp_shards.hpp"
#include "hw/snapshot/byte_stream.hpp"

namespace parashift::hw {

namespace {

// What one old shard held, as the re-plan's pieces: every layer's carried
// sets (weights, then Adam's m and v) at rank `rank`'s coordinates of the
// plan its payload names (HwBackend::serialize's layout).
struct OldShard {
  std::int64_t iteration = 0;
  std::string plan;
};

OldShard append_pieces(std::span<const std::byte> payload, int rank, const LayerShape& shape,
                       int optimizer_kind, std::size_t set_count, ByteWriter& out) {
  ByteReader in(payload);
  OldShard shard;
  shard.iteration = in.i64();
  const std::vector<int> head = in.ints();
  if (head.size() != 7 || head[0] < 1 || head[1] < 1 || head[2] < 1 || head[3] < 1)
    throw HwError("snapshot shard of rank " + std::to_string(rank) + ": a malformed plan header");
  if (head[4] != optimizer_kind)
    throw HwError("snapshot shard of rank " + std::to_string(rank) +
                  " was written with another optimizer");
  core::ParallelPlan old;
  old.tp = head[0];
  old.pp = head[1];
  old.dp = head[2];
  old.virtual_stages = head[3];
  old.optimizer_sharding = static_cast<core::OptimizerSharding>(head[5]);
  old.order = static_cast<core::RankOrder>(head[6]);
  shard.plan = old.label();
  if (rank >= old.gpus())
    throw HwError("snapshot shard of rank " + std::to_string(rank) + " under " + shard.plan +
                  ", which has " + std::to_string(old.gpus()) + " ranks");
  const core::RankCoord coord = core::RankLayout(old).coord(rank);
  LayerShape old_shape = shape;
  old_shape.tp = old.tp;
  const auto local_sizes = layer_tensor_sizes(old_shape);
  const bool sharded = old.optimizer_sharding == core::OptimizerSharding::Distributed && old.dp > 1;
  in.ints();  // layers per virtual stage: this plan keeps its own split
  in.ints();  // micro-batches per replica: likewise
  const std::int64_t layers = in.i64();
  for (std::int64_t i = 0; i < layers; ++i) {
    const int index = static_cast<int>(in.i64());
    for (std::size_t set = 0; set < set_count; ++set)
      for (std::size_t t = 0; t < 4; ++t) {
        const std::vector<float> values = in.float_vector();
        const std::size_t first =
            set > 0 && sharded ? shard_of(local_sizes[t], old.dp, coord.dp).begin : 0;
        out.ints({index, static_cast<int>(set), static_cast<int>(t), coord.tp, old.tp});
        out.i64(static_cast<std::int64_t>(first));
        out.floats(values);
      }
    // The gradient compressor's state of the layer: another plan's, dropped
    // (as a re-plan drops it).
    const std::int64_t states = in.i64();
    for (std::int64_t j = 0; j < states * 4; ++j) in.float_vector();
  }
  if (!in.done())
    throw HwError("snapshot shard of rank " + std::to_string(rank) + ": trailing bytes");
  return shard;
}

// The plan header's rank count (tp x pp x dp), or 0 for a malformed header.
int ranks_of_payload(std::span<const std::byte> payload) {
  try {
    ByteReader in(payload);
    in.i64();
    const std::vector<int> head = in.ints();
    return head.size() == 7 && head[0] > 0 && head[1] > 0 && head[2] > 0
               ? head[0] * head[1] * head[2]
               : 0;
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace

std::vector<HwBackend::OtherPlanShard> HwBackend::other_plan_shards(
    std::optional<long long> only) const {
  std::vector<OtherPlanShard> out;
  for (const ShardKind kind : {ShardKind::Own, ShardKind::Replica}) {
    for (const auto& [rank, v] : store_.entries(kind)) {
      if (only && v != *only) continue;
      const ShardRead seen = store_.inspect(rank, v, kind);
      // This plan's shards are restore()'s; a shard refused for anything
      // but its plan (torn, another job) is as good as lost.
      if (seen.payload || seen.plan.empty() || seen.plan == plan_.label()) continue;
      const auto payload =
          ShardStore(options_.shm_root, options_.job, host(), seen.plan).read(rank, v, kind);
      if (payload)
        out.push_back({v, rank, kind, seen.plan, ranks_of_payload(*payload), std::move(*payload)});
    }
  }
  return out;
}

std::optional<long long> HwBackend::newest_resharded_snapshot() {
  const std::vector<OtherPlanShard> held = other_plan_shards(std::nullopt);
  // Candidates: every rank's newest versions of such shards, the same list everywhere.
  std::vector<long long> mine;
  for (const auto& s : held) mine.push_back(s.version);
  std::sort(mine.rbegin(), mine.rend());
  mine.erase(std::unique(mine.begin(), mine.end()), mine.end());
  std::vector<double> row(kCandidateSlots, -1.0);
  for (std::size_t i = 0; i < std::min(mine.size(), row.size()); ++i)
    row[i] = static_cast<double>(mine[i]);
  const std::vector<double> all = world_.all_gather(std::span<const double>(row));
  std::vector<long long> candidates;
  for (const double v : all)
    if (v >= 0) candidates.push_back(static_cast<long long>(v));
  std::sort(candidates.rbegin(), candidates.rend());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  // The newest version whose old ranks' shards are all on some host (own or
  // a replica): each holds its old rank's whole state.
  for (const long long v : candidates) {
    double ranks = 0;
    for (const auto& s : held)
      if (s.version == v) ranks = std::max(ranks, static_cast<double>(s.plan_ranks));
    world_.all_reduce_max(std::span<double>(&ranks, 1));
    if (ranks < 1) continue;
    std::vector<double> present(static_cast<std::size_t>(ranks), 0.0);
    for (const auto& s : held)
      if (s.version == v && s.plan_ranks == static_cast<int>(ranks) && s.rank < s.plan_ranks)
        present[static_cast<std::size_t>(s.rank)] = 1.0;
    world_.all_reduce_max(std::span<double>(present));
    if (std::find(present.begin(), present.end(), 0.0) == present.end()) return v;
  }
  return std::nullopt;
}

int HwBackend::host() const {
  return options_.host >= 0 ? options_.host : world_.rank() / ranks_per_node();
}

bool HwBackend::restore_resharded(long long version) {
  const std::size_t set_count = options_.optimizer.kind == OptimizerKind::Adam ? 3 : 1;
  ByteWriter mine;
  std::string from_plan;
  std::int64_t iteration = -1;
  double replicas_used = 0;
  // Ranks that share a host share its shards: each file is read by one of
  // them (old rank r by the (r mod n)-th of the n ranks on the host).
  const std::array<double, 1> my_host{static_cast<double>(host())};
  const std::vector<double> hosts = world_.all_gather(std::span<const double>(my_host));
  int on_host = 0, mine_at = 0;
  for (int r = 0; r < world_.size(); ++r)
    if (hosts[static_cast<std::size_t>(r)] == my_host[0]) {
      if (r == world_.rank()) mine_at = on_host;
      ++on_host;
    }
  // A replica is read only for an old rank whose own shard is on no host.
  const std::vector<OtherPlanShard> shards = other_plan_shards(version);
  double old_ranks = 0;
  for (const auto& held : shards) old_ranks = std::max(old_ranks, double(held.plan_ranks));
  world_.all_reduce_max(std::span<double>(&old_ranks, 1));
  std::vector<double> own(static_cast<std::size_t>(old_ranks), 0.0);
  for (const auto& held : shards)
    if (held.kind == ShardKind::Own && held.rank < static_cast<int>(own.size()))
      own[static_cast<std::size_t>(held.rank)] = 1.0;
  world_.all_reduce_max(std::span<double>(own));
  for (const OtherPlanShard& held : shards) {
    if (held.rank % on_host != mine_at) continue;
    if (held.kind == ShardKind::Replica && held.rank < static_cast<int>(own.size()) &&
        own[static_cast<std::size_t>(held.rank)] == 1.0)
      continue;
    const OldShard shard =
        append_pieces(held.payload, held.rank, shape_, static_cast<int>(options_.optimizer.kind),
                      set_count, mine);
    if (iteration >= 0 && shard.iteration != iteration)
      throw HwError("snapshot version " + std::to_string(version) +
                    ": shards of different iterations on one host");
    iteration = shard.iteration;
    from_plan = shard.plan;
    if (held.kind == ShardKind::Replica) ++replicas_used;
  }
  // Every rank takes part, or none: whether any holds such a shard, and that
  // all of them hold the same iteration (-1 for none).
  std::array<double, 3> agree{iteration >= 0 ? 1.0 : 0.0, static_cast<double>(iteration),
                              -static_cast<double>(iteration >= 0 ? iteration : 1LL << 52)};
  world_.all_reduce_max(std::span<double>(agree));
  if (agree[0] == 0) return false;
  if (agree[1] != -agree[2])
    throw HwError("snapshot version " + std::to_string(version) +
                  ": hosts hold shards of different iterations");
  const std::string what = "restore of snapshot version " + std::to_string(version) + " under " +
                           plan_.label() + (from_plan.empty() ? "" : " from " + from_plan);
  const std::vector<std::byte> bytes = mine.bytes();
  double sent = static_cast<double>(bytes.size()) * (world_.size() - 1);
  install_whole(assemble_whole(exchange_pieces(bytes), what));
  if (compressed_sync_)  // another plan's error feedback: started over
    for (const auto& [index, slot] : layers_)
      for (int j = 0; j < 4; ++j) compressed_sync_->compressor().set_state(index * 4 + j, {});
  std::array<double, 2> totals{replicas_used, sent};
  world_.all_reduce_sum(std::span<double>(totals));
  RestoreStats stats;
  stats.version = version;
  stats.shards_fetched = static_cast<int>(totals[0]);
  stats.bytes_fetched = totals[1];
  stats.resharded = true;
  last_restore_ = stats;
  iteration_ = static_cast<std::int64_t>(agree[1]);
  warm_ = false;
  kernels_->synchronize();
  world_.barrier();
  return true;
}

}  // namespace parashift::hw
