#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>

#include "core/cost/overlap.hpp"
#include "sim/collective.hpp"
#include "sim/iteration_state.hpp"

namespace parashift::sim::detail {

void check_replica_micro_batches(const std::vector<int>& per_replica,
                                 const core::ParallelPlan& plan) {
  if (per_replica.empty()) return;
  if (static_cast<int>(per_replica.size()) != plan.dp) {
    throw std::invalid_argument("micro_batches_per_replica needs one entry per replica");
  }
  int total = 0;
  for (int m : per_replica) {
    if (m < 1) throw std::invalid_argument("every replica needs at least one micro-batch");
    if (plan.virtual_stages > 1 && m % plan.pp != 0) {
      throw std::invalid_argument(
          "interleaved 1F1B needs each replica's micro-batches to be a multiple of pp");
    }
    total += m;
  }
  if (total * plan.micro_batch != plan.global_batch) {
    throw std::invalid_argument("micro_batches_per_replica must keep the global batch");
  }
  if (!plan.replicas_may_differ() &&
      std::adjacent_find(per_replica.begin(), per_replica.end(), std::not_equal_to<>()) !=
          per_replica.end()) {
    throw std::invalid_argument(
        "FSDP needs the same micro-batches on every replica: each pass gathers its layers "
        "over the whole data-parallel group");
  }
}

FsdpPass fsdp_pass(const core::FsdpComm& c, bool forward, int layers, TimeNs layer_ns) {
  if (forward)
    return {core::fsdp_forward_exposed_ns(c, layers, layer_ns),
            core::fsdp_forward_comm_ns(c, layers)};
  return {core::fsdp_backward_exposed_ns(c, layers, layer_ns),
          core::fsdp_backward_comm_ns(c, layers)};
}

TimeNs param_gather_tail_ns(const Worker& w, const core::WorkProfile& profile, int pp,
                            TimeNs gather_ns) {
  if (gather_ns <= 0) return 0;
  double first_forward = static_cast<double>(w.layers_on_stage * profile.layer.forward_ns);
  if (w.stage == 0) first_forward += static_cast<double>(profile.embedding_forward_ns);
  if (w.stage == pp - 1) first_forward += static_cast<double>(profile.head_forward_ns);
  return core::param_gather_exposed_ns(gather_ns, std::llround(first_forward * w.slowdown),
                                       w.layers_on_stage);
}

core::FsdpComm fsdp_group_comm(const PathModel& paths, const core::NcclFabric& fabric,
                               const core::WorkProfile& profile, const core::ModelSpec& model,
                               const std::vector<int>& ring, bool first, bool last) {
  auto ns = [&](core::CollectiveKind kind, double bytes) -> TimeNs {
    return bytes > 0 ? ring_collective_ns(paths, fabric, kind, bytes, ring) : 0;
  };
  const double layer = profile.params_per_gpu_layer;
  const double other = core::embedding_params_on_gpu(model.tied_embeddings,
                                                     profile.params_per_gpu_embedding, first, last);
  const double grad = profile.grad_bytes_per_param;
  return {ns(core::CollectiveKind::AllGather, layer * 2.0),
          ns(core::CollectiveKind::ReduceScatter, layer * grad),
          ns(core::CollectiveKind::AllGather, other * 2.0),
          ns(core::CollectiveKind::ReduceScatter, other * grad)};
}

std::vector<int> set_fsdp_rings(DpGroup& g, int shard) {
  const int dp = static_cast<int>(g.members.size());
  shard = std::clamp(shard, 1, std::max(1, dp));
  g.replica_rings.clear();
  if (shard < dp) {
    for (const std::vector<int>& ring : g.tp_rings) {
      for (int j = 0; j < shard; ++j) {
        std::vector<int>& copies = g.replica_rings.emplace_back();
        for (int k = j; k < dp; k += shard) copies.push_back(ring[static_cast<std::size_t>(k)]);
      }
    }
  }
  return {g.tp_rings[0].begin(), g.tp_rings[0].begin() + shard};
}

const std::vector<std::vector<int>>& bucket_rings(const DpGroup& g) {
  return g.replica_rings.empty() ? g.tp_rings : g.replica_rings;
}

core::CollectiveKind bucket_kind(const DpGroup& g, const core::ParallelPlan& plan) {
  return plan.optimizer_sharding == core::OptimizerSharding::None || !g.replica_rings.empty()
             ? core::CollectiveKind::AllReduce
             : core::CollectiveKind::ReduceScatter;
}

void start_deferred_syncs(const GradSyncRun& run, const BucketSyncJob& job,
                          std::vector<DpGroup>& groups, const std::vector<Worker>& workers,
                          const std::function<void(DpGroup&)>& done) {
  for (DpGroup& g : groups) {
    g.deferred_running = true;
    const TimeNs start = run.kernel.now();
    GradSyncRun group_run = run;
    group_run.shape = &g.shape;
    start_deferred_sync(group_run, job,
                        workers[static_cast<std::size_t>(g.members[0])].params_on_gpu, g.tp_rings,
                        static_cast<std::uint64_t>(g.index), [&g, start, done](TimeNs end) {
                          g.busy_ns += end - start;
                          g.deferred_running = false;
                          done(g);
                        });
  }
}

void set_layer_comm(Worker& w, const core::LayerWork& layer, const std::vector<int>& cp_ring,
                    const PathModel& paths, const core::NcclFabric& fabric) {
  auto calls_ns = [&](const core::CollectiveCall& call, const std::vector<int>& gpus) -> TimeNs {
    if (call.count == 0 || gpus.size() < 2) return 0;
    return std::llround(call.count * static_cast<double>(ring_collective_ns(
                                         paths, fabric, call.kind, call.bytes, gpus)));
  };
  // With sequence parallelism each all-gather has its reduce-scatter twin.
  w.tp_forward_ns_per_layer =
      calls_ns(layer.tp_forward, w.gpus) + calls_ns(layer.tp_forward_scatter, w.gpus);
  w.tp_backward_ns_per_layer =
      calls_ns(layer.tp_backward, w.gpus) + calls_ns(layer.tp_backward_scatter, w.gpus);
  // The ring's exchange runs under each block's attention.
  w.cp_forward_ns_per_layer = core::cp_exposed_ns(
      calls_ns(layer.cp_forward, cp_ring),
      std::llround(static_cast<double>(layer.attention_forward_ns) * w.slowdown));
  w.cp_backward_ns_per_layer = core::cp_exposed_ns(
      calls_ns(layer.cp_backward, cp_ring),
      std::llround(static_cast<double>(layer.attention_backward_ns) * w.slowdown));
}

}  // namespace parashift::sim::detail
