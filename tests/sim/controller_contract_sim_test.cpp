// The controller contract (tests/core/controller/controller_contract.hpp) on
// the simulator: the same cases the fake backend passes, through SimBackend.
// The harness gives the simulator an arithmetic work profile (a third of a
// layer's time forward, two thirds backward, no embedding or head, no
// communication) so stage times are proportional to layers, as the cases
// assume, and ±3% compute jitter through the scenario's jitter event.
#include <memory>

#include "../core/controller/controller_contract.hpp"
#include "core/controller/job_model.hpp"
#include "sim/sim_backend.hpp"
#include "test_topologies.hpp"

namespace parashift::test {

class SimHarness {
 public:
  static constexpr bool kMeasured = false;  // the scenario's +-3% jitter event
  explicit SimHarness(const ContractCase& c) : case_(c) {
    scenario_.model = synthetic_model(c.layers);
    scenario_.name = "contract";
    scenario_.device = core::device_preset("h100-sxm-80gb");
    scenario_.topology = star(c.plan.gpus() + c.spare_gpus, 100e9, 1'000);
    scenario_.training.global_batch = c.plan.global_batch;
    scenario_.training.seq_len = 1024;
    scenario_.plan = c.plan;
    scenario_.run.seed = c.seed;
    scenario_.run.contention = false;
    backend_ = std::make_unique<sim::SimBackend>(scenario_);
    core::WorkProfile profile;
    profile.layer.forward_ns = c.layer_ns / 3;
    profile.layer.backward_ns = c.layer_ns - c.layer_ns / 3;
    profile.params_per_gpu_layer = c.params_per_gpu_layer;
    backend_->set_profile(profile);
    core::FaultEvent jitter;
    jitter.kind = core::FaultEventKind::Jitter;
    jitter.sigma = c.jitter;
    events_.push_back(jitter);
    reload();
  }
  core::Backend& backend() { return *backend_; }
  void slow_down(int rank, double factor) {
    core::FaultEvent slow;
    slow.kind = core::FaultEventKind::Slow;
    slow.gpu = rank;
    slow.factor = factor;
    slow.at_ns = backend_->now_ns();
    events_.push_back(slow);
    reload();
  }
  void fail_gpu(int gpu) { backend_->fail_gpu(gpu); }
  int gpu_of_rank(int rank) const { return backend_->gpu_of_rank(rank); }
  core::JobModel job(std::int64_t total_iterations) const {
    return contract_job(case_, total_iterations);
  }
  core::TimeNs layer_ns() const { return case_.layer_ns; }
  std::vector<int> layers_per_virtual_stage() const {
    return backend_->layers_per_virtual_stage(plan());
  }
  std::vector<int> micro_batches() const { return backend_->micro_batches_per_replica(plan()); }

 private:
  // The plan the backend last ran (the case's before the first step).
  core::ParallelPlan plan() const { return backend_->last_plan().value_or(case_.plan); }
  void reload() {
    backend_->set_slowdowns(sim::Slowdowns(events_, scenario_.topology, scenario_.run.seed));
  }
  ContractCase case_;
  core::Scenario scenario_;
  std::unique_ptr<sim::SimBackend> backend_;
  std::vector<core::FaultEvent> events_;
};

}  // namespace parashift::test

PARASHIFT_CONTROLLER_CONTRACT(parashift::test::SimHarness);
