// A Backend made of arithmetic, for controller tests: each step() reports
// per-rank compute = m_replica x layers_on_stage x layer_ns x slowdown x
// (1 + jitter * u), u uniform in [-1, 1) from a seeded generator, and an
// iteration time from the same pipeline formula the controller predicts with
// (pipeline_model.hpp). It applies RepartitionDirective, RebalanceDirective
// and ReplanDirective (the new plan's even splits; another number of ranks
// placed afresh on the GPUs that have not failed, in order), and for
// recovery SnapshotDirective, RestoreDirective (the snapshot's iteration
// runs next) and RemapDirective. Rank r starts on GPU r; the case's
// spare_gpus follow, every GPU on a host of its own in one rack. A GPU
// failed with fail_gpu() is reported by the next step ("fail gpu G"),
// which does not run.
#pragma once

#include <cstdint>
#include <vector>

#include "core/backend.hpp"
#include "core/controller/job_model.hpp"
#include "gpu_placement.hpp"

namespace parashift::test {

struct ContractCase {
  core::ParallelPlan plan;
  int layers = 0;
  core::TimeNs layer_ns = 1'000'000;  // forward + backward of one layer, one micro-batch
  double jitter = 0.03;               // +-3% per rank per iteration
  std::uint64_t seed = 1;
  double params_per_gpu_layer = 1e8;
  int spare_gpus = 0;  // GPUs beyond the plan's, free at the start
};

/// A case of pp stages, dp replicas, global_batch micro-batches of 1 and
/// `layers` layers, the other fields at their defaults.
inline ContractCase pipeline_case(int pp, int dp, int global_batch, int layers) {
  ContractCase c;
  c.plan.pp = pp;
  c.plan.dp = dp;
  c.plan.global_batch = global_batch;
  c.layers = layers;
  return c;
}

class FakeBackend : public core::Backend {
 public:
  explicit FakeBackend(const ContractCase& c);

  core::Capabilities capabilities() const override;
  core::StepReport step(const core::ParallelPlan& plan) override;
  void apply(const core::Directive& directive) override;

  void set_slowdown(int rank, double factor) { slowdown_[static_cast<std::size_t>(rank)] = factor; }
  /// `gpu` fails: reported by the next step, gone from then on.
  void fail_gpu(int gpu) { failing_.push_back(gpu); }
  int gpu_of_rank(int rank) const { return placement_.gpu_of_rank(rank); }
  const std::vector<int>& layers_per_virtual_stage() const { return layers_; }
  const std::vector<int>& micro_batches() const { return micro_; }

 private:
  double uniform();  // [-1, 1)

  ContractCase case_;
  std::vector<int> layers_;
  std::vector<int> micro_;
  std::vector<double> slowdown_;
  std::uint64_t rng_;
  std::int64_t iteration_ = 0;
  GpuPlacement placement_;
  std::vector<int> failing_;
  std::vector<std::int64_t> snapshots_;
};

/// What the controller is told of a contract case's job (every harness).
core::JobModel contract_job(const ContractCase& c, std::int64_t total_iterations);

/// The harness the controller contract tests are written against; one per
/// backend type (tests/core/controller/controller_contract.hpp).
class FakeHarness {
 public:
  static constexpr bool kMeasured = false;  // compute drawn with the case's +-3% jitter
  explicit FakeHarness(const ContractCase& c) : case_(c), backend_(c) {}
  core::Backend& backend() { return backend_; }
  void slow_down(int rank, double factor) { backend_.set_slowdown(rank, factor); }
  void fail_gpu(int gpu) { backend_.fail_gpu(gpu); }
  int gpu_of_rank(int rank) const { return backend_.gpu_of_rank(rank); }
  /// What the controller is told of the job.
  core::JobModel job(std::int64_t total_iterations) const;
  core::TimeNs layer_ns() const { return case_.layer_ns; }
  std::vector<int> layers_per_virtual_stage() const { return backend_.layers_per_virtual_stage(); }
  std::vector<int> micro_batches() const { return backend_.micro_batches(); }

 private:
  ContractCase case_;
  FakeBackend backend_;
};

}  // namespace parashift::test
