// The controller contract's harness for the hw executor: the case's plan runs
// as plan.gpus() real HwBackend ranks, one thread each, over an in-process
// ThreadCommunicator group; each step() runs a real iteration of a tiny
// transformer (hidden 32, 2 heads, MLP 128, 8 tokens, micro-batch 1) and
// returns the report every rank built. Compute is measured in thread CPU time.
// A layer's forward and backward take about 60 us on the dev VM, so the
// healthy case's 1,000 iterations of 16 ranks x 8 micro-batches x 8 layers
// run in about 70 s (hidden 64 and 16 tokens: 330 us, 6.5 min, and twice
// the iteration-to-iteration spread, 11% against 6%).
// Every rank's thread is pinned to the core the harness was built on, and
// they take turns through one compute slot (HwOptions::compute_slots), so
// every rank computes on the same core and none is time-sliced against
// another mid-segment. Measured on the 2-vCPU dev VM: unpinned, 8-16
// computing threads were time-sliced against each other, and the two vCPUs
// ran at speeds up to 1.45x apart for seconds (threads that stayed on the slow
// one looked like stragglers); healthy ranks' samples in one iteration
// spread by up to +-25%, pinned with one slot by +-3-5% (the machine's drift
// over time moves them all alike). slow_down() stretches a rank's compute
// segments by spinning (HwBackend::set_compute_slowdown).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "core/backend.hpp"
#include "core/controller/job_model.hpp"
#include "fake_backend.hpp"  // ContractCase
#include "gpu_placement.hpp"
#include "hw/comm/communicator.hpp"
#include "hw/comm/virtual_time.hpp"
#include "hw/exec/hw_backend.hpp"
#include "report_wire.hpp"

namespace parashift::test {

class ThreadedHwBackend : public core::Backend {
 public:
  /// `clock`: how the ranks time their compute (Counted: the same on every
  /// machine). With `link` (Counted only) every rank runs on a virtual
  /// clock, its messages priced on `link` (hw/comm/virtual_time.hpp): its
  /// whole report is then the same on every machine.
  /// Rank r starts on GPU r, each GPU a host of its own (its shared memory
  /// holds the rank's snapshot shards and the replica of rank r - 1's);
  /// `spare_gpus` more are free.
  /// With `world` (an MPI job: one process per GPU, GPU g on world rank g,
  /// at least as many processes as GPUs) the ranks are processes, not
  /// threads: this process runs the rank placed on its GPU, if any, over a
  /// group split from `world`; the job's rank 0's process sends each report
  /// (and the job's shape after every change) to every process, so that
  /// each process's controller, spares' and failed GPUs' included, decides
  /// the same.
  ThreadedHwBackend(const core::ModelSpec& model, int seq_len, const core::ParallelPlan& plan,
                    hw::ComputeClock clock = hw::ComputeClock::ThreadCpu,
                    std::optional<hw::VirtualLink> link = std::nullopt, int spare_gpus = 0,
                    hw::Communicator* world = nullptr);
  ~ThreadedHwBackend() override;
  core::Capabilities capabilities() const override;
  /// Reports the GPUs failed since the last step as failures (and runs no
  /// iteration), or runs one on every rank.
  core::StepReport step(const core::ParallelPlan& plan) override;
  /// Remap and a re-plan onto fewer GPUs restart the job's ranks, as an
  /// elastic agent does: new rank threads over a new group, the moved rank
  /// on its spare's host, the ranks of a shrunk plan on the live GPUs in
  /// order; each rank's state is then what the restore that follows brings
  /// (from its host's shards, a lost one from its replica, another plan's
  /// resharded). Anything else goes to every rank's HwBackend.
  void apply(const core::Directive& directive) override;
  /// GPU `gpu` fails: its host's shared memory is gone, and the next step
  /// reports it ("fail gpu G").
  void fail_gpu(int gpu) { failing_.push_back(gpu); }
  int gpu_of_rank(int rank) const { return placement_.gpu_of_rank(rank); }
  /// Rank r's backend (this process's ranks only).
  hw::HwBackend& rank(int r) { return *ranks_[static_cast<std::size_t>(r)]; }
  const hw::HwBackend& rank(int r) const { return *ranks_[static_cast<std::size_t>(r)]; }
  /// Stretches rank r's compute by `factor` (where this process runs it).
  void set_compute_slowdown(int rank, double factor);
  /// As the job now runs (rank 0's; every process knows them).
  const std::vector<int>& layers_per_stage() const;
  const std::vector<int>& micro_batches_per_replica() const;
  /// With a virtual link: the job's virtual time (rank 0's clock; every
  /// rank's is the same between steps). Threads only.
  core::TimeNs virtual_now_ns() const {
    return clocks_.empty() || !clocks_[0] ? 0 : clocks_[0]->now_ns();
  }
  /// Per step, per rank: compute / (micro-batches x layers) as the step ran.
  const std::vector<std::vector<double>>& per_layer_ns() const { return per_layer_ns_; }

 private:
  /// New ranks for `plan` on placement_, over a new group (the virtual
  /// clocks keep the job's time).
  void launch(const core::ParallelPlan& plan);
  bool local(int rank) const;  // runs in this process
  /// Runs work(r) for every rank this process runs: on threads, or inline.
  void on_local_ranks(const std::function<void(int)>& work);
  /// MPI: rank 0's report `mine` (empty between steps) and the shape it
  /// now runs, sent by its process to every process; sets shape_.
  core::StepReport share(const core::StepReport& mine);
  void share_shape() {
    if (world_ != nullptr) share({});
  }

  core::ModelSpec model_;
  int seq_len_;
  hw::HwOptions options_;
  std::optional<hw::VirtualLink> link_;
  GpuPlacement placement_;
  std::vector<int> failing_;
  int cpu_;                                  // every rank's thread runs on this core
  std::unique_ptr<hw::ComputeSlots> slots_;  // one: a rank computes alone
  std::vector<std::unique_ptr<hw::Communicator>> comms_;
  std::vector<std::unique_ptr<hw::VirtualClock>> clocks_;       // with a virtual link
  std::vector<std::unique_ptr<hw::Communicator>> timed_comms_;  // around comms_, on clocks_
  std::vector<std::unique_ptr<hw::HwBackend>> ranks_;           // by rank; null where not local
  std::vector<std::vector<double>> per_layer_ns_;
  hw::Communicator* world_ = nullptr;       // MPI: one process per GPU
  std::unique_ptr<hw::Communicator> idle_;  // MPI: the group of processes with no rank
  core::ParallelPlan plan_;                 // the plan the ranks run
  JobShape shape_;                          // MPI: rank 0's, shared
};

class HwHarness {
 public:
  static constexpr bool kMeasured = true;  // real thread CPU time on this machine
  explicit HwHarness(const ContractCase& c, hw::ComputeClock clock = hw::ComputeClock::ThreadCpu,
                     std::optional<hw::VirtualLink> link = std::nullopt,
                     hw::Communicator* world = nullptr);
  core::Backend& backend() { return backend_; }
  void slow_down(int rank, double factor);
  core::JobModel job(std::int64_t total_iterations) const;
  /// Measured: median over the first kDecisionWindow iterations (the samples
  /// the cases' decisions at iterations 4-6 are made from) of a healthy rank's
  /// compute per micro-batch per layer (optimizer included, as the controller
  /// sees it). Over the whole run the median would drift with the machine's
  /// speed, which the decision did not see.
  core::TimeNs layer_ns() const;
  static constexpr std::size_t kDecisionWindow = 7;  // iterations 0-6
  std::vector<int> layers_per_virtual_stage() const;
  std::vector<int> micro_batches() const;
  void fail_gpu(int gpu) { backend_.fail_gpu(gpu); }
  int gpu_of_rank(int rank) const { return backend_.gpu_of_rank(rank); }
  hw::HwBackend& rank(int r) { return backend_.rank(r); }

 private:
  ContractCase case_;
  core::ParallelPlan plan_;  // the case's plan as the executor runs it
  ThreadedHwBackend backend_;
  std::vector<double> slowdown_;
};

/// The same executor ranks on the counted clock (hw::ComputeClock::Counted):
/// each rank's compute is its layer work counted, 3 units of 100 us per
/// layer and micro-batch (forward 1, backward 2), times its slowdown, on
/// virtual time (the default 10 GB/s, 5 us link): iteration and
/// communication times too. The reports are exact and the same on every
/// machine: the cases' exact checks hold as on the fake (no jitter at
/// all), so they run in CI.
class CountedHwHarness : public HwHarness {
 public:
  static constexpr bool kMeasured = false;
  explicit CountedHwHarness(const ContractCase& c)
      : HwHarness(c, hw::ComputeClock::Counted, hw::VirtualLink{}) {}
};

/// The MPI job's world for MpiCountedHwHarness (set by the MPI contract
/// test's main, tests/hw/mpi_contract_test.cpp).
hw::Communicator*& mpi_world();

/// The counted harness with the ranks as MPI processes (ThreadedHwBackend's
/// `world`): the executor's production path, one HwBackend per process
/// over MpiCommunicator groups, on the counted clock and virtual time.
class MpiCountedHwHarness : public HwHarness {
 public:
  static constexpr bool kMeasured = false;
  explicit MpiCountedHwHarness(const ContractCase& c)
      : HwHarness(c, hw::ComputeClock::Counted, hw::VirtualLink{}, mpi_world()) {}
};

}  // namespace parashift::test
