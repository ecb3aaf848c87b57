#include "core/planner/planner.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <map>
#include "core/assert.hpp"

#include "core/cost/memory.hpp"
#include "core/cost/work_profile.hpp"
#include "core/planner/plan_space.hpp"
#include "core/scenario/cluster_view.hpp"
#include "core/scenario/scenario.hpp"

namespace parashift::core {

PlannerInput planner_input_of(const Scenario& scenario, const topo::Topology& topology) {
  PlannerInput in;
  in.model = scenario.model;
  in.device = scenario.device;
  in.cluster = cluster_view_of(topology, scenario.device, scenario.nccl_algo);
  in.device_groups = scenario.device_groups;
  in.global_batch = scenario.training.global_batch;
  in.seq_len = scenario.training.seq_len;
  in.precision = scenario.training.precision;
  in.order = scenario.plan.order;
  return in;
}

PlannerInput planner_input_of(const Scenario& scenario) {
  return planner_input_of(scenario, scenario.topology);
}

namespace {

struct Candidate {
  ParallelPlan plan;
  IterationEstimate estimate;
};

// Shorter first; equal times by label (built only on a tie).
bool candidate_before(const Candidate& a, const Candidate& b) {
  if (a.estimate.total_ns != b.estimate.total_ns) return a.estimate.total_ns < b.estimate.total_ns;
  return a.plan.label() < b.plan.label();
}

// work_profile() reads only these plan fields (per-micro-batch work of one
// layer); consecutive plans of PlanSpace::for_each share them in runs.
struct ProfileKey {
  int tp = 0;
  int cp = 0;
  int micro_batch = 0;
  Recompute recompute = Recompute::None;
  bool sequence_parallel = false;
  bool operator==(const ProfileKey&) const = default;
};

ProfileKey profile_key(const ParallelPlan& p) {
  return {p.tp, p.cp, p.micro_batch, p.recompute, p.sequence_parallel};
}

// The K best seen so far as a heap whose front is the worst of them.
class TopK {
 public:
  explicit TopK(int k) : k_(static_cast<std::size_t>(std::max(0, k))) { heap_.reserve(k_); }

  bool would_keep(TimeNs total_ns) const {
    return heap_.size() < k_ || (k_ > 0 && total_ns <= heap_.front().estimate.total_ns);
  }
  void offer(const Candidate& c) {
    if (heap_.size() < k_) {
      heap_.push_back(c);
      std::push_heap(heap_.begin(), heap_.end(), candidate_before);
    } else if (k_ > 0 && candidate_before(c, heap_.front())) {
      std::pop_heap(heap_.begin(), heap_.end(), candidate_before);
      heap_.back() = c;
      std::push_heap(heap_.begin(), heap_.end(), candidate_before);
    }
  }
  std::vector<RankedPlan> sorted() const {
    std::vector<RankedPlan> out;
    out.reserve(heap_.size());
    for (const Candidate& c : heap_) out.push_back({c.plan, c.estimate, c.plan.label()});
    std::sort(out.begin(), out.end(), ranks_before);
    return out;
  }

 private:
  std::size_t k_;
  std::vector<Candidate> heap_;
};

std::optional<ReferenceStanding> stand(const PlannerInput& in, double usable_bytes) {
  if (!in.reference) return std::nullopt;
  ReferenceStanding r;
  ParallelPlan plan = *in.reference;
  plan.global_batch = in.global_batch;
  plan.precision = in.precision;
  r.valid = plan.problems(in.model, in.seq_len, in.cluster.gpus).empty();
  r.matches_pins = in.pins.matches(plan);
  r.ranked.plan = plan;
  r.ranked.label = plan.label();
  if (r.valid) {
    const WorkProfile profile =
        in.work_model ? in.work_model(in.device, plan)
                      : work_profile(in.model, in.device, plan, in.seq_len, in.options);
    r.ranked.estimate = with_gpu_factors(
        estimate_iteration(in.model, in.device, in.cluster, plan, profile, in.options), plan,
        plan_gpu_factors(in, plan));
    r.fits_memory = r.ranked.estimate.memory.total_bytes() <= usable_bytes;
  }
  r.rank = 1;
  return r;
}

// Every field the plan space varies, and the batch, precision and rank order it copies in.
bool same_plan(const ParallelPlan& a, const ParallelPlan& b) {
  return a.tp == b.tp && a.pp == b.pp && a.dp == b.dp && a.cp == b.cp &&
         a.virtual_stages == b.virtual_stages && a.micro_batch == b.micro_batch &&
         a.global_batch == b.global_batch && a.schedule == b.schedule &&
         a.recompute == b.recompute && a.sequence_parallel == b.sequence_parallel &&
         a.optimizer_sharding == b.optimizer_sharding && a.precision == b.precision &&
         a.sync == b.sync && a.compression == b.compression && a.order == b.order;
}

}  // namespace

std::vector<GpuFactor> plan_gpu_factors(const PlannerInput& in, const ParallelPlan& plan) {
  if (in.device_groups.empty()) return in.gpu_factors;
  return merge_factors(
      group_factors(in.device_groups, in.model, in.device, plan, in.seq_len, in.options),
      in.gpu_factors);
}

double usable_memory_bytes(const DeviceSpec& device, double margin) {
  return device.hbm_bytes * (1.0 - margin);
}

bool ranks_before(const RankedPlan& a, const RankedPlan& b) {
  if (a.estimate.total_ns != b.estimate.total_ns) return a.estimate.total_ns < b.estimate.total_ns;
  return a.label < b.label;
}

PlanSearch search_plans(const PlannerInput& in, const PlannerOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  PlanSearch result;
  DeviceSpec least = in.device;
  least.hbm_bytes = least_hbm_bytes(in.device_groups, in.device);
  const double usable_bytes = usable_memory_bytes(least, options.memory_margin);
  result.reference = stand(in, usable_bytes);
  const TimeNs reference_ns =
      result.reference && result.reference->valid ? result.reference->ranked.estimate.total_ns : 0;

  PlanSpaceInput space_in;
  space_in.gpus = in.cluster.gpus;
  space_in.gpus_per_node = in.cluster.gpus_per_node;
  space_in.global_batch = in.global_batch;
  space_in.seq_len = in.seq_len;
  space_in.precision = in.precision;
  space_in.order = in.order;
  space_in.pins = in.pins;
  space_in.max_cp = options.max_cp;
  const PlanSpace space(in.model, space_in);

  SearchStats& stats = result.stats;
  TopK top(options.top_k);
  WorkProfile profile;
  ProfileKey cached{};
  bool have_profile = false;
  std::vector<GpuFactor> factors = in.gpu_factors;
  // The factors' replica paces per layout (tp, cp, dp, pp), for the factors now in use.
  std::map<std::array<int, 4>, ReplicaPaces> paces;
  std::int64_t faster_than_reference = 0;
  space.for_each([&](const ParallelPlan& plan) {
    ++stats.enumerated;
    PARASHIFT_ASSERT(plan.problems(in.model, in.seq_len, in.cluster.gpus).empty());
    if (result.reference && same_plan(plan, result.reference->ranked.plan)) {
      result.reference->in_space = true;
    }
    if (options.admit && !options.admit(plan)) {
      ++stats.not_admitted;
      return;
    }
    if (peak_memory(in.model, plan, in.seq_len).total_bytes() > usable_bytes) {
      ++stats.pruned_by_memory;
      return;
    }
    const ProfileKey key = profile_key(plan);
    // A backend's work model may read any plan field: no reuse across plans.
    if (in.work_model) {
      profile = in.work_model(in.device, plan);
      if (!in.device_groups.empty()) factors = plan_gpu_factors(in, plan);
      paces.clear();
    } else if (!have_profile || !(key == cached)) {
      profile = work_profile(in.model, in.device, plan, in.seq_len, in.options);
      // The groups' factors depend on the same fields as the profile.
      if (!in.device_groups.empty()) {
        factors = plan_gpu_factors(in, plan);
        paces.clear();
      }
      cached = key;
      have_profile = true;
    }
    ++stats.evaluated;
    IterationEstimate estimate =
        estimate_iteration(in.model, in.device, in.cluster, plan, profile, in.options);
    if (!factors.empty()) {
      auto [at, added] = paces.try_emplace({plan.tp, plan.cp, plan.dp, plan.pp});
      if (added) at->second = replica_paces(plan, factors);
      estimate = with_replica_paces(estimate, plan, at->second);
    }
    const Candidate c{plan, estimate};
    if (c.estimate.total_ns < reference_ns) ++faster_than_reference;
    if (top.would_keep(c.estimate.total_ns)) top.offer(c);
  });
  result.top = top.sorted();
  if (result.reference) result.reference->rank = 1 + faster_than_reference;
  result.stats.wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace parashift::core
