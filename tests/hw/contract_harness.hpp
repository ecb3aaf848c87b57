// The controller contract's harness for the hw executor: the case's plan runs
// as plan.gpus() real HwBackend ranks, one thread each, over an in-process
// ThreadCommunicator group; each step() runs a real iteration of a tiny
// transformer (hidden 64, 4 heads, MLP 256, 16 tokens, micro-batch 1) and
// returns the report every rank built. Compute is measured in thread CPU time
// (ranks share this machine's cores), and slow_down() stretches a rank's
// compute segments by spinning (HwBackend::set_compute_slowdown).
#pragma once

#include <memory>
#include <vector>

#include "core/backend.hpp"
#include "core/controller/job_model.hpp"
#include "fake_backend.hpp"  // ContractCase
#include "hw/comm/communicator.hpp"
#include "hw/exec/hw_backend.hpp"

namespace parashift::test {

class ThreadedHwBackend : public core::Backend {
 public:
  ThreadedHwBackend(const core::ModelSpec& model, int seq_len, const core::ParallelPlan& plan);
  core::Capabilities capabilities() const override { return ranks_[0]->capabilities(); }
  core::StepReport step(const core::ParallelPlan& plan) override;
  void apply(const core::Directive& directive) override;
  hw::HwBackend& rank(int r) { return *ranks_[static_cast<std::size_t>(r)]; }
  const hw::HwBackend& rank(int r) const { return *ranks_[static_cast<std::size_t>(r)]; }
  /// Per step, per rank: compute / (micro-batches x layers) as the step ran.
  const std::vector<std::vector<double>>& per_layer_ns() const { return per_layer_ns_; }

 private:
  std::vector<std::unique_ptr<hw::Communicator>> comms_;
  std::vector<std::unique_ptr<hw::HwBackend>> ranks_;
  std::vector<std::vector<double>> per_layer_ns_;
};

class HwHarness {
 public:
  explicit HwHarness(const ContractCase& c);
  core::Backend& backend() { return backend_; }
  void slow_down(int rank, double factor);
  core::JobModel job(std::int64_t total_iterations) const;
  /// Measured: median over the iterations so far of a healthy rank's compute
  /// per micro-batch per layer (optimizer included, as the controller sees it).
  core::TimeNs layer_ns() const;
  std::vector<int> layers_per_virtual_stage() const;
  std::vector<int> micro_batches() const;

 private:
  ContractCase case_;
  core::ParallelPlan plan_;  // the case's plan as the executor runs it
  ThreadedHwBackend backend_;
  std::vector<double> slowdown_;
};

}  // namespace parashift::test
