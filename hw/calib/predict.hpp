// The calibrated prediction of the executor's iteration time: the executor's
// exact op list (hw/model/layer_ops.hpp) timed with the calibrated kernels of
// this machine, replayed through the executor's own pipeline schedule, then
// the data-parallel buckets and the optimizer, which the executor runs after
// the pipeline (no overlap). Where the cost model (core/cost) differs from the
// executor, this follows the executor: fp32, no norms / embedding / head
// (synthetic inputs and a squared-error loss instead), no GQA (kv_heads is
// ignored), no communication overlap. Kernel costs are CPU time on a core,
// turned into wall time by the calibrated cpu_share (1 on an idle machine).
#pragma once

#include <cstddef>
#include <vector>

#include "core/cost/work_profile.hpp"
#include "core/model_spec.hpp"
#include "core/parallel_plan.hpp"
#include "core/units.hpp"
#include "hw/calib/calibration.hpp"
#include "hw/model/layer_ops.hpp"
#include "hw/model/optimizer.hpp"

namespace parashift::core {
struct Scenario;
}

namespace parashift::hw {

struct ExecutorJob {
  const core::ModelSpec* model = nullptr;
  const core::ParallelPlan* plan = nullptr;
  int seq_len = 0;
  OptimizerKind optimizer = OptimizerKind::Adam;
  std::size_t dp_bucket_bytes = std::size_t{1} << 20;  // HwOptions' default
};

struct IterationPrediction {
  core::TimeNs iteration_ns = 0;
  core::TimeNs layer_forward_ns = 0;   // one layer, one micro-batch, compute only
  core::TimeNs layer_backward_ns = 0;  // ... input and weight gradients
  core::TimeNs tp_per_layer_ns = 0;    // forward + backward all-reduces
  core::TimeNs pipeline_ns = 0;        // the slowest stage's schedule, sends included
  core::TimeNs dp_ns = 0;              // gradient buckets after the pipeline
  core::TimeNs optimizer_ns = 0;       // the largest stage's step
};

/// The scenario's model, plan and sequence length (the job points into it).
ExecutorJob executor_job(const core::Scenario& scenario,
                         OptimizerKind optimizer = OptimizerKind::Adam);

/// The shape of one layer on one rank for one micro-batch, as HwBackend builds it.
LayerShape executor_layer_shape(const ExecutorJob& job);

/// Seconds of one all-reduce of `bytes` per rank over `ranks` ranks of a
/// `group` ("tp", "dp"; the job's points when the profile has none for it):
/// the bus bandwidth interpolated (log-log) between calibrated sizes, times
/// the ring factor 2(n-1)/n; never below the smallest measured time. 0 for
/// one rank.
double all_reduce_s(const CalibrationProfile& profile, double bytes, int ranks,
                    const std::string& group = "job");
/// Seconds of one calibrated GEMM: its exact kernel when measured, else the
/// fitted device (peak x d / (d + half)).
double gemm_op_s(const CalibrationProfile& profile, const GemmOp& op);

/// One rank's GEMMs of one iteration of the plan (stage 0's layers, this
/// replica's micro-batches, forward, backward and what recompute reruns),
/// for GEMM-only replays.
std::vector<GemmOp> iteration_gemm_ops(const ExecutorJob& job);

IterationPrediction predict_iteration(const ExecutorJob& job, const CalibrationProfile& profile);

/// The same calibrated op list as a core::WorkProfile, for the simulator
/// (sim::simulate_iteration): layer forward / backward compute, tensor-parallel
/// all-reduces, activations between stages, fp32 gradients and the
/// optimizer per parameter; the synthetic data as "embedding", the loss as "head".
core::WorkProfile executor_work_profile(const ExecutorJob& job, const CalibrationProfile& profile);

}  // namespace parashift::hw
