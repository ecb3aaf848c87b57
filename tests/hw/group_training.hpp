// Trains the tiny model with every rank of a job a thread on its own
// communicator of an in-process group (thread group, rendezvous model).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hw/comm/communicator.hpp"
#include "hw/exec/hw_backend.hpp"
#include "tests/hw/hw_test_model.hpp"

namespace parashift::test {

using Group = std::vector<std::unique_ptr<hw::Communicator>>;
/// Runs before iteration i on every rank (directives); may be empty.
using BeforeStep = std::function<void(hw::HwBackend&, int)>;

struct GroupRun {
  core::ModelSpec model = tiny_model();
  int seq_len = kTinySeq;
  int iterations = 3;
  std::string job;         // snapshot directory name (made unique per process)
  BeforeStep before;       // optional
  int ranks_per_node = 0;  // 0: the whole job is one node
  hw::OptimizerKind optimizer = hw::OptimizerKind::Adam;
  std::vector<core::StepReport>* reports = nullptr;  // when set: rank 0's step reports
  std::vector<int>* final_layers = nullptr;          // when set: rank 0's split at the end
  bool gradient_norms = false;                       // HwOptions::gradient_norms
  std::shared_ptr<const hw::TextTask> text;          // HwOptions::text
  float learning_rate = 0;                           // 0: tiny_options' default
  std::vector<core::CompressionSpec> probes;         // HwOptions::compression_probes
  int probe_every = 1;                               // HwOptions::compression_probe_every
};

/// Runs body(rank) for ranks 0..ranks-1, each on its own thread; after all
/// have ended, rethrows the first exception one of them threw.
void run_ranks(int ranks, const std::function<void(int rank)>& body);

/// Rank 0's losses over `run.iterations` of `plan` on `group` (size
/// plan.gpus()); the first rank's exception, if any, is rethrown after
/// every thread has ended.
std::vector<double> train_group(Group& group, const core::ParallelPlan& plan, const GroupRun& run);
/// train_group on a new thread group of plan.gpus() ranks; rank 0's step
/// reports into `reports` when given.
std::vector<double> train_threads(const core::ParallelPlan& plan, GroupRun run,
                                  std::vector<core::StepReport>* reports = nullptr);
/// The bytes of a report's groups named `prefix`... ("tp[", "pp[", "dp["), summed.
double comm_bytes(const core::StepReport& report, const std::string& prefix);

}  // namespace parashift::test
