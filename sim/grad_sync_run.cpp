#include "sim/grad_sync_run.hpp"

#include <memory>

#include "core/cost/estimate.hpp"
#include "sim/collective.hpp"
#include "sim/network/nccl_coflow.hpp"

namespace parashift::sim {

void start_deferred_sync(const GradSyncRun& run, const BucketSyncJob& job, double params,
                         const std::vector<std::vector<int>>& rings, std::uint64_t flow_hash,
                         std::function<void(TimeNs)> on_done) {
  const core::ParallelPlan& plan = *job.plan;
  const int dpn = core::group_placement(plan, run.paths.topology().gpus_per_host()).dp_per_node;
  auto steps = core::bucket_sync_steps(plan, *job.model, params, job.grad_bytes_per_param, dpn);
  std::erase_if(steps, [](const core::SyncStep& s) { return !s.deferred; });
  start_grad_sync(run, steps, 0, rings, flow_hash, std::move(on_done));
}

std::vector<std::vector<int>> scope_rings(const topo::Topology& topology,
                                          const std::vector<int>& ring, core::SyncScope scope) {
  return core::scope_rings(ring, scope, [&topology](int gpu) { return topology.host_of_gpu(gpu); });
}

namespace {

// One collective of `bytes` a rank that crossed nodes ran in `tree` shape or not.
void note_shape(const GradSyncRun& run, double bytes, bool tree) {
  if (run.shape == nullptr) return;
  run.shape->bytes += bytes;
  if (tree) run.shape->tree_bytes += bytes;
}

core::CollectiveKind ring_kind(core::CollectiveKind kind) {
  return kind == core::CollectiveKind::AllToAll ? core::CollectiveKind::ReduceScatter : kind;
}

struct SyncState {
  GradSyncRun run;
  std::vector<core::SyncStep> steps;
  std::vector<std::vector<int>> rings;
  std::uint64_t hash = 0;
  std::function<void(TimeNs)> on_done;
};

void run_step(const std::shared_ptr<SyncState>& s, std::size_t at) {
  Kernel& kernel = s->run.kernel;
  if (at == s->steps.size()) {
    s->on_done(kernel.now());
    return;
  }
  const core::SyncStep& step = s->steps[at];
  std::vector<std::vector<int>> groups;
  for (const auto& ring : s->rings)
    for (auto& g : scope_rings(s->run.paths.topology(), ring, step.scope))
      if (g.size() > 1) groups.push_back(std::move(g));
  if (groups.empty()) {
    run_step(s, at + 1);
    return;
  }
  const core::CollectiveKind kind = ring_kind(step.call.kind);
  if (s->run.network != nullptr) {
    auto left = std::make_shared<std::size_t>(groups.size());
    for (const auto& g : groups) {
      const bool tree = start_collective_coflow(
          *s->run.network, s->run.fabric, kind, step.call.bytes, g, s->hash,
          [s, left, at](TimeNs) {
            if (--*left == 0) run_step(s, at + 1);
          },
          core::TrafficClass::GradSync);
      if (step.scope != core::SyncScope::IntraNode) note_shape(s->run, step.call.bytes, tree);
    }
  } else {
    TimeNs longest = 0;
    for (const auto& g : groups)
      longest = std::max(longest,
                         ring_collective_ns(s->run.paths, s->run.fabric, kind, step.call.bytes, g));
    kernel.schedule_in(longest, [s, at] { run_step(s, at + 1); });
  }
}

}  // namespace

void start_grad_sync(const GradSyncRun& run, const std::vector<core::SyncStep>& steps,
                     TimeNs compute_ns, const std::vector<std::vector<int>>& rings,
                     std::uint64_t flow_hash, std::function<void(TimeNs)> on_done) {
  auto s = std::make_shared<SyncState>(SyncState{run, steps, rings, flow_hash, std::move(on_done)});
  run.kernel.schedule_in(compute_ns, [s] { run_step(s, 0); });
}

void start_bucket_sync(const GradSyncRun& run, const BucketSyncJob& job, core::CollectiveKind kind,
                       double bytes, const std::vector<std::vector<int>>& rings,
                       std::uint64_t flow_hash, std::function<void(TimeNs)> on_done) {
  const core::ParallelPlan& plan = *job.plan;
  if (plan.sync != core::SyncMode::Flat || plan.compression.enabled()) {
    const double params = bytes / job.grad_bytes_per_param;
    const int dpn = core::group_placement(plan, run.paths.topology().gpus_per_host()).dp_per_node;
    const TimeNs compute = job.device == nullptr
                               ? 0
                               : core::bucket_compression_ns(plan, *job.model, params, dpn,
                                                             core::compute_rates(*job.device));
    auto steps = core::bucket_sync_steps(plan, *job.model, params, job.grad_bytes_per_param, dpn);
    std::erase_if(steps, [](const core::SyncStep& s) { return s.deferred; });
    start_grad_sync(run, steps, compute, rings, flow_hash, std::move(on_done));
    return;
  }
  if (run.network != nullptr) {
    // One ring per tensor-parallel rank, all at once: shared links see all of them.
    auto left = std::make_shared<std::size_t>(rings.size());
    auto done = std::make_shared<std::function<void(TimeNs)>>(std::move(on_done));
    for (const auto& ring : rings) {
      const bool tree = start_collective_coflow(
          *run.network, run.fabric, kind, bytes, ring, flow_hash,
          [left, done](TimeNs end) {
            if (--*left == 0) (*done)(end);
          },
          core::TrafficClass::GradSync);
      note_shape(run, bytes, tree);
    }
  } else {
    Kernel& kernel = run.kernel;
    const TimeNs d = ring_collective_ns(run.paths, run.fabric, kind, bytes, rings[0]);
    kernel.schedule_in(d, [&kernel, done = std::move(on_done)] { done(kernel.now()); });
  }
}

}  // namespace parashift::sim
