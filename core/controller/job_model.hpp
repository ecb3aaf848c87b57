// What the controller knows of the job beyond its measurements: the plan,
// the current layer split and per-replica micro-batch counts, and the few
// per-layer constants that turn a change into bytes and seconds. The
// scenario loader builds it once (make_job_model); the controller keeps the
// split and the counts current as its directives are applied.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/cost/cost_inputs.hpp"
#include "core/cost/device_groups.hpp"
#include "core/cost/work_profile.hpp"
#include "core/device_spec.hpp"
#include "core/model_spec.hpp"
#include "core/parallel_plan.hpp"
#include "core/units.hpp"

namespace parashift::core {

struct JobModel {
  ParallelPlan plan;
  int layers = 0;  // transformer layers of the model
  /// Layers of each virtual stage (pp * virtual_stages entries), the
  /// semantics of sim::IterationInput::layers_per_virtual_stage; empty: even.
  std::vector<int> layers_per_virtual_stage;
  /// Micro-batches of each data-parallel replica (dp entries); empty: the
  /// plan's micro_batches() each.
  std::vector<int> micro_batches_per_replica;
  /// Per-micro-batch compute of a physical stage that does not scale with its
  /// layers (embedding on stage 0, output head and loss on the last), forward
  /// + backward; pp entries, empty: none.
  std::vector<TimeNs> stage_fixed_ns;
  double params_per_gpu_layer = 0;        // one layer's parameters on one GPU (after tp)
  double static_bytes_per_param = 16.0;   // weights + gradients + optimizer state
  double activation_bytes_per_layer = 0;  // one layer, one micro-batch, one GPU
  double memory_limit_bytes = 0;          // per GPU; 0: unlimited
  /// Per physical stage (pp entries) when the stages' GPUs differ in HBM
  /// (device groups); empty: memory_limit_bytes everywhere.
  std::vector<double> stage_memory_limit_bytes;
  int gpus_per_node = 8;              // ranks r and r' share a node when r/g == r'/g
  std::int64_t total_iterations = 0;  // length of the run, for gains "over the remaining run"
  /// The cost model's inputs (the presets), for modules that re-estimate
  /// the job (calibrate); null where the job has none (a bare controller).
  std::shared_ptr<const CostInputs> cost;

  int virtual_stage_count() const { return plan.pp * plan.virtual_stages; }
  double memory_limit(int stage) const {
    return static_cast<std::size_t>(stage) < stage_memory_limit_bytes.size()
               ? stage_memory_limit_bytes[static_cast<std::size_t>(stage)]
               : memory_limit_bytes;
  }
  /// Fills the empty defaults above (even split, equal micro-batch counts,
  /// zero fixed times). Asserts that the sizes match the plan.
  void normalise();
  /// Layers on physical stage `stage` (the sum over its chunks).
  int stage_layers(int stage) const;
};

/// Micro-batches whose activations physical stage `stage` holds at its peak,
/// for `micro_batches` on its replica (1F1B and ZB-H1: min(m, pp - stage);
/// GPipe: m; interleaved: Megatron's warm-up count over v chunks).
double in_flight_micro_batches(const ParallelPlan& plan, int stage, int micro_batches);

/// The job model of a scenario: layer and memory constants from the work
/// profile and the memory model, the device's HBM as the limit.
/// With device groups: the least HBM of all as the job's limit, and each
/// stage's least over its own GPUs (rank r on GPU r).
void limit_memory_by_group(JobModel& job, const std::vector<DeviceGroup>& groups,
                           const DeviceSpec& device);
JobModel make_job_model(const ModelSpec& model, const DeviceSpec& device, const ParallelPlan& plan,
                        const WorkProfile& profile, int seq_len, std::int64_t total_iterations,
                        int gpus_per_node);

}  // namespace parashift::core
