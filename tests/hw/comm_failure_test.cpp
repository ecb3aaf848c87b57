// A communicator error inside an executor step (a dead peer, an MPI or NCCL
// call that failed) arrives as the step report's typed failure, and the one
// loop ends the run on it (hw/exec/hw_backend.hpp, HwBackend::step).
#include <doctest/doctest.h>

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/controller/job_runner.hpp"
#include "hw/comm/self_communicator.hpp"
#include "hw/exec/hw_backend.hpp"
#include "hw/hw_error.hpp"
#include "tests/hw/hw_test_model.hpp"

using namespace parashift;

namespace {

// A one-rank group whose every call throws HwError once `broken` is set, as
// MpiCommunicator's calls do when a peer has died (MPI_ERRORS_RETURN).
class BreakingCommunicator : public hw::Communicator {
 public:
  explicit BreakingCommunicator(std::shared_ptr<bool> broken) : broken_(std::move(broken)) {}
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  void all_reduce_sum(std::span<float> d) override { check(), inner_.all_reduce_sum(d); }
  void all_reduce_sum(std::span<double> d) override { check(), inner_.all_reduce_sum(d); }
  void all_reduce_max(std::span<double> d) override { check(), inner_.all_reduce_max(d); }
  std::vector<double> all_gather(std::span<const double> mine) override {
    check();
    return inner_.all_gather(mine);
  }
  void all_gather(std::span<const float> mine, std::span<float> all) override {
    check();
    inner_.all_gather(mine, all);
  }
  void reduce_scatter_sum(std::span<const float> all, std::span<float> mine) override {
    check();
    inner_.reduce_scatter_sum(all, mine);
  }
  void barrier() override { check(), inner_.barrier(); }
  void send(std::span<const float> d, int peer, int tag) override {
    check();
    inner_.send(d, peer, tag);
  }
  void recv(std::span<float> d, int peer, int tag) override {
    check();
    inner_.recv(d, peer, tag);
  }
  void send_bytes(std::span<const std::byte> d, int peer, int tag) override {
    check();
    inner_.send_bytes(d, peer, tag);
  }
  std::vector<std::byte> recv_bytes(int peer, int tag) override {
    check();
    return inner_.recv_bytes(peer, tag);
  }
  void flush_sends() override { check(), inner_.flush_sends(); }
  std::unique_ptr<hw::Communicator> split(int, int) override {
    return std::make_unique<BreakingCommunicator>(broken_);
  }

 private:
  void check() const {
    if (*broken_) throw hw::HwError("MPI_Allreduce failed: MPI_ERR_PROC_FAILED: peer gone");
  }
  std::shared_ptr<bool> broken_;
  hw::SelfCommunicator inner_;
};

}  // namespace

TEST_CASE("a communicator error in a step is the report's typed failure, and the run ends on it") {
  auto broken = std::make_shared<bool>(false);
  BreakingCommunicator world(broken);
  const auto plan = test::tiny_plan(1, 1, 1);
  hw::HwBackend backend(test::tiny_model(), test::kTinySeq, 1, plan,
                        test::tiny_options(hw::OptimizerKind::Sgd, "comm-failure"), world);
  core::JobRunner runner(backend, plan);
  runner.set_recovery(3);  // recovery on: a "comm" failure is still not one it recovers
  CHECK(runner.step());
  CHECK(runner.step());
  *broken = true;
  // Iteration 2's first call fails: no exception leaves the step, the
  // report carries {comm, rank 0, iteration 2, the call's message}, and the
  // runner ends the run there with 2 iterations done.
  CHECK_FALSE(runner.step());
  REQUIRE(runner.failures().size() == 1);
  const core::FailureSeen& f = runner.failures().front();
  CHECK(f.kind == "comm");
  CHECK(f.component == "rank 0");
  CHECK(f.iteration == 2);
  CHECK(f.detail.find("MPI_ERR_PROC_FAILED") != std::string::npos);
  CHECK(core::to_string(f).rfind("comm rank 0 at iteration 2 (", 0) == 0);
  CHECK(runner.iterations() == 2);
  CHECK(backend.iterations_done() == 2);
}
