#include "core/controller/job_model.hpp"

#include <algorithm>
#include "core/assert.hpp"

#include "core/cost/memory.hpp"
#include "core/rank_layout.hpp"
#include "core/work_split.hpp"

namespace parashift::core {

void JobModel::normalise() {
  if (layers_per_virtual_stage.empty()) {
    layers_per_virtual_stage = even_split(layers, virtual_stage_count());
  }
  if (micro_batches_per_replica.empty()) {
    micro_batches_per_replica.assign(static_cast<std::size_t>(plan.dp), plan.micro_batches());
  }
  if (stage_fixed_ns.empty()) stage_fixed_ns.assign(static_cast<std::size_t>(plan.pp), 0);
  PARASHIFT_ASSERT(static_cast<int>(layers_per_virtual_stage.size()) == virtual_stage_count());
  PARASHIFT_ASSERT(static_cast<int>(micro_batches_per_replica.size()) == plan.dp);
  PARASHIFT_ASSERT(static_cast<int>(stage_fixed_ns.size()) == plan.pp);
}

int JobModel::stage_layers(int stage) const {
  return layers_on_stage(layers_per_virtual_stage, plan.pp, stage);
}

double in_flight_micro_batches(const ParallelPlan& plan, int stage, int micro_batches) {
  const double m = std::max(1, micro_batches);
  const double p = plan.pp;
  switch (plan.schedule) {
    case Schedule::GPipe:
      return m;
    case Schedule::Interleaved1F1B: {
      // Warm-up forwards (2(p-s-1) + (v-1)p) plus the one in flight, each of
      // one chunk: v chunks make one stage's worth of layers.
      const double v = plan.virtual_stages;
      const double warm = 2.0 * (p - stage - 1) + (v - 1) * p + 1;
      return std::min(m, warm / v);
    }
    case Schedule::OneFOneB:
    case Schedule::ZeroBubbleH1:
      break;
  }
  return std::min(m, p - stage);
}

void limit_memory_by_group(JobModel& job, const std::vector<DeviceGroup>& groups,
                           const DeviceSpec& device) {
  if (groups.empty()) return;
  job.memory_limit_bytes = least_hbm_bytes(groups, device);
  // Each stage's limit: the least HBM of the groups holding one of its ranks
  // (rank r on GPU r, stages placed by the plan's rank order).
  const RankLayout layout(job.plan);
  const auto stages = static_cast<std::size_t>(job.plan.pp);
  job.stage_memory_limit_bytes.assign(stages, device.hbm_bytes);
  std::vector<char> covered(stages, 0);
  for (const DeviceGroup& g : groups) {
    const int end = std::min(g.first_gpu + g.gpus, layout.ranks());
    for (int r = std::max(0, g.first_gpu); r < end; ++r) {
      const auto s = static_cast<std::size_t>(layout.coord(r).pp);
      double& limit = job.stage_memory_limit_bytes[s];
      limit = covered[s] ? std::min(limit, g.device.hbm_bytes) : g.device.hbm_bytes;
      covered[s] = 1;
    }
  }
}

JobModel make_job_model(const ModelSpec& model, const DeviceSpec& device, const ParallelPlan& plan,
                        const WorkProfile& profile, int seq_len, std::int64_t total_iterations,
                        int gpus_per_node) {
  JobModel job;
  job.plan = plan;
  job.layers = model.layers;
  job.params_per_gpu_layer = profile.params_per_gpu_layer;
  job.static_bytes_per_param = resident_bytes_per_param(plan);
  job.activation_bytes_per_layer = layer_activation_bytes(model, plan, seq_len);
  job.memory_limit_bytes = device.hbm_bytes;
  job.gpus_per_node = gpus_per_node;
  job.total_iterations = total_iterations;
  job.stage_fixed_ns.assign(static_cast<std::size_t>(plan.pp), 0);
  job.stage_fixed_ns.front() += profile.embedding_forward_ns + profile.embedding_backward_ns;
  job.stage_fixed_ns.back() += profile.head_forward_ns + profile.head_backward_ns;
  job.normalise();
  return job;
}

}  // namespace parashift::core
