// The executor's data-parallel gradient sync under a plan's sync mode and
// compressor (core/cost/grad_sync.hpp prices the same steps), on real
// buffers, matrix by matrix:
//   flat:          the compressor's average over the data-parallel group;
//   hierarchical:  each matrix's rows padded to k blocks (k replicas on a
//                  node), a reduce-scatter inside the node at full precision,
//                  the compressor's average of this rank's block over the
//                  ranks with the same place on the other nodes, and an
//                  all-gather inside the node;
//   delayed:       hierarchical, each iteration applying the previous one's
//                  sum (the executor's collectives block, so the deferred
//                  steps do not overlap the next forward here: the
//                  staleness is real, the overlap is the simulator's).
// Nodes are HwOptions::ranks_per_node world ranks (0: one node). Host
// memory only: on the CUDA executor the matrices would cross to the host.
#pragma once

#include <memory>
#include <optional>
#include <span>

#include "core/compress/gradient_compressor.hpp"
#include "core/parallel_plan.hpp"
#include "hw/comm/communicator.hpp"

namespace parashift::hw {

/// A Communicator as a compressor's ReduceGroup: all-to-all by sends and
/// receives (the queued sends leave before the receives block).
class CommReduceGroup : public core::ReduceGroup {
 public:
  explicit CommReduceGroup(Communicator& comm) : comm_(comm) {}
  int ranks() const override { return comm_.size(); }
  int rank() const override { return comm_.rank(); }
  void sum(std::span<float> data) override { comm_.all_reduce_sum(data); }
  void all_gather(std::span<const float> mine, std::span<float> all) override {
    comm_.all_gather(mine, all);
  }
  void all_to_all(std::span<const float> send, std::span<float> recv) override;

 private:
  Communicator& comm_;
};

class CompressedSync {
 public:
  /// Collective over `dp` (every member calls it): splits the node and
  /// cross-node groups under hierarchical sync. `world_rank` and
  /// `ranks_per_node` place this rank on its node.
  CompressedSync(const core::ParallelPlan& plan, Communicator& dp, int world_rank,
                 int ranks_per_node, std::uint64_t seed);

  /// Replaces the rows x cols gradient `grad` of matrix `tensor` by the
  /// group's sum (the executor's replicated-optimizer convention); returns
  /// the bytes this rank handed to collectives (nccl-tests' sizes).
  double sum(int tensor, std::span<float> grad, int rows, int cols);

  const core::GradientCompressor& compressor() const { return compressor_; }
  core::GradientCompressor& compressor() { return compressor_; }

 private:
  double sync(int tensor, std::span<float> grad, int rows, int cols);  // this iteration's sum
  core::ParallelPlan plan_;
  Communicator& dp_;
  std::unique_ptr<Communicator> intra_, inter_;  // hierarchical only
  core::GradientCompressor compressor_;
};

}  // namespace parashift::hw
