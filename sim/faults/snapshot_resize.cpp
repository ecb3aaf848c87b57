// Shrink-and-replan when no spare is left, and regrow when spares are back,
// for the snapshot policy (snapshot_run.hpp).
#include "sim/faults/snapshot_run.hpp"

namespace parashift::sim::detail {

// ---- no spare left --------------------------------------------------------
// The resize writes a fresh snapshot of the re-sharded state during its
// pause (old versions use the old rank numbering).
void SnapshotRun::shrink(core::RecoveryPlan& plan, const core::RemapResult& remap, double restored,
                         TimeNs now) {
  std::vector<int> unplaced;
  for (const auto& u : remap.unplaced) unplaced.push_back(u.rank);
  const auto result = core::shrink_and_replan(s_.planner_base, plan_, unplaced);
  if (!result) {
    // Every replica lost a rank: nothing to shrink to. The stranded ranks
    // keep their GPUs and the job waits for those to be repaired (a GPU
    // repaired sooner, or a spare, is not looked for).
    TimeNs back_ns = now;
    for (const auto& u : remap.unplaced)
      back_ns = std::max(back_ns, repair_at_ns_[static_cast<std::size_t>(u.gpu)]);
    plan.reinit_ns += back_ns - now;
    note(now, "no spare left and no smaller plan: waiting " +
                  std::to_string(core::ns_to_s(back_ns - now)) + " s for the failed GPUs' repair");
    return;
  }
  ++run_.shrinks;
  plan.replan = result->plan;
  const std::set<int> dropped(result->dropped_dp.begin(), result->dropped_dp.end());
  std::vector<int> kept;
  for (int d = 0; d < plan_.dp; ++d) {
    if (!dropped.count(d)) kept.push_back(d);
  }
  const core::RankLayout old_layout(plan_);
  const core::RankLayout new_layout(result->plan);
  auto mapping = std::make_shared<Mapping>();
  mapping->rank_of_gpu.assign(mapping_->rank_of_gpu.size(), -1);
  for (int r = 0; r < new_layout.ranks(); ++r) {
    core::RankCoord c = new_layout.coord(r);
    c.dp = kept[static_cast<std::size_t>(c.dp)];
    const int g = mapping_->gpu(old_layout.rank(c));
    if (g >= 0) mapping->set(g, r);
  }
  for (std::size_t g = 0; g < mapping->rank_of_gpu.size(); ++g) {
    if (mapping->rank_of_gpu[g] < 0 && mapping_->rank_of_gpu[g] >= 0 && !gpu_down_[g]) {
      pool_.push_back(static_cast<int>(g));
    }
  }
  std::sort(pool_.begin(), pool_.end());
  mapping_ = mapping;
  // Optimizer shards are re-spread over the remaining replicas.
  const double reshard_bytes =
      state_.optimizer_bytes * (static_cast<double>(plan_.dp) / result->plan.dp - 1.0);
  plan.transfer_ns += core::transfer_ns(reshard_bytes, s_.scenario->device.nic_Bps);
  set_plan(result->plan, result->batch_share * batch_share_);
  versions_.clear();
  push_version(restored, now);
}

// As many replicas as the free GPUs hold come back (all of them: the
// scenario's plan again); a recovery in progress defers it to its end.
void SnapshotRun::maybe_regrow() {
  if (plan_.dp >= original_dp_ || in_recovery_) return;
  const std::optional<core::ParallelPlan> grown =
      core::regrow_plan(plan_, s_.scenario->plan, static_cast<int>(pool_.size()));
  if (!grown) return;
  const TimeNs now = kernel_.now();
  close_segment(now);  // the partial iteration is redone after the resize
  const double at_iteration = last_iteration_work_;
  // Old replicas keep their GPUs (dp indices 0..dp-1); new ones take spares.
  const core::ParallelPlan& full = *grown;
  const double share = full.dp == original_dp_ ? 1.0 : batch_share_ * full.dp / plan_.dp;
  const core::RankLayout old_layout(plan_);
  const core::RankLayout new_layout(full);
  auto mapping = std::make_shared<Mapping>();
  mapping->rank_of_gpu.assign(mapping_->rank_of_gpu.size(), -1);
  for (std::size_t g = 0; g < mapping_->rank_of_gpu.size(); ++g) {
    const int r = mapping_->rank_of_gpu[g];
    if (r >= 0) mapping->set(static_cast<int>(g), new_layout.rank(old_layout.coord(r)));
  }
  std::size_t next = 0;
  for (int r = 0; r < new_layout.ranks(); ++r) {
    if (new_layout.coord(r).dp < plan_.dp) continue;
    mapping->set(pool_[next++], r);
  }
  pool_.erase(pool_.begin(), pool_.begin() + static_cast<std::ptrdiff_t>(next));
  mapping_ = mapping;
  ++run_.regrows;
  const TimeNs pause =
      cfg_.reinit_ns + core::transfer_ns(state_.total_bytes(), s_.scenario->device.nic_Bps);
  set_plan(full, share);
  versions_.clear();
  push_version(at_iteration, now);
  in_recovery_ = true;
  pending_work_ = at_iteration;
  const std::uint64_t ticket = ++recovery_ticket_;
  const TimeNs end = now + pause;
  kernel_.schedule_at(end, [this, ticket, end] {
    if (ticket != recovery_ticket_) return;
    in_recovery_ = false;
    start_segment(end, pending_work_);
    maybe_regrow();  // GPUs repaired during this regrow
  });
}

}  // namespace parashift::sim::detail
