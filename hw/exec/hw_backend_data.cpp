// HwBackend's data and loss: the synthetic task's inputs and targets
// (model/synthetic_data.hpp) or a text's windows (model/text_task.hpp),
// and the last stage's loss and its gradient.
#include <span>
#include <vector>

#include "hw/exec/hw_backend.hpp"
#include "hw/model/synthetic_data.hpp"
#include "hw/model/text_task.hpp"

namespace parashift::hw {

const float* HwBackend::sample(int micro_batch, bool target, DeviceBuffer& scratch) {
  const bool resident_data = options_.resident_data && !options_.text;
  auto& resident = target ? resident_targets_ : resident_inputs_;
  if (const auto it = resident.find(micro_batch); it != resident.end()) return it->second.data();
  const Matrix host =
      options_.text ? options_.text->input(shape_, text_embedding_, seed_, iteration_, micro_batch)
      : target      ? micro_batch_target(shape_, seed_, micro_batch)
                    : micro_batch_input(shape_, seed_, micro_batch);
  DeviceBuffer* into = &scratch;
  if (resident_data)
    into = &resident.emplace(micro_batch, DeviceBuffer(*kernels_, scratch.size())).first->second;
  // This rank's rows: all of them, or its token shard under sequence parallelism.
  const std::size_t first_element =
      shape_.sequence_parallel ? static_cast<std::size_t>(groups_.coord.tp) * scratch.size() : 0;
  kernels_->upload(std::span<const float>(host.data() + first_element, scratch.size()),
                   into->data());
  return into->data();
}

DeviceBuffer& HwBackend::loss_grad(std::size_t micro_batch) {
  while (loss_grad_.size() <= micro_batch) loss_grad_.emplace_back(*kernels_, activation_.size());
  return loss_grad_[micro_batch];
}

double HwBackend::last_stage_loss(int micro_batch, std::size_t slot, int all_micro_batches) {
  const std::size_t activation = activation_.size();  // this rank's tokens x hidden
  if (!options_.text) {
    // The mean over every element of every micro-batch's output.
    const double denominator =
        static_cast<double>(shape_.tokens()) * shape_.hidden * all_micro_batches;
    const float* target = sample(micro_batch, true, target_);
    return kernels_->squared_error(activation_.data(), target, loss_grad(slot).data(), activation,
                                   denominator);
  }
  // The mean over every token of every micro-batch, on the host: this
  // rank's rows of y come down, their gradient goes back up.
  Matrix y(shape_.tokens_local(), shape_.hidden);
  kernels_->download(activation_.data(), std::span<float>(y.data(), activation));
  const std::vector<int> targets = options_.text->targets(shape_, seed_, iteration_, micro_batch);
  const auto rows = static_cast<std::size_t>(shape_.tokens_local());
  const std::size_t first_row =
      shape_.sequence_parallel ? static_cast<std::size_t>(groups_.coord.tp) * rows : 0;
  const LossTerm term =
      cross_entropy_loss(y, text_embedding_, std::span<const int>(targets).subspan(first_row, rows),
                         static_cast<double>(shape_.tokens()) * all_micro_batches);
  kernels_->upload(std::span<const float>(term.dy.data(), activation), loss_grad(slot).data());
  return term.loss;
}

}  // namespace parashift::hw
