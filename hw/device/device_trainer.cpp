#include "hw/device/device_trainer.hpp"

#include <string>

#include "core/input_error.hpp"
#include "hw/model/synthetic_data.hpp"

namespace parashift::hw {

namespace {

LayerShape one_rank_shape(const core::ModelSpec& model, int seq_len,
                          const core::ParallelPlan& plan) {
  check_one_rank_plan(plan);
  plan.validate(model, seq_len, 1);
  return {model.hidden, model.heads, model.ffn_hidden, 1, seq_len, plan.micro_batch};
}

std::size_t activation_elements(const LayerShape& s) {
  return static_cast<std::size_t>(s.tokens()) * static_cast<std::size_t>(s.hidden);
}

DeviceBuffer upload(DeviceKernels& k, const Matrix& m) {
  DeviceBuffer b(k, static_cast<std::size_t>(m.size()));
  k.upload(std::span<const float>(m.data(), b.size()), b.data());
  return b;
}

}  // namespace

void check_one_rank_plan(const core::ParallelPlan& plan) {
  if (plan.gpus() != 1)
    throw core::InputError("the device trainer runs plans of one rank (tp=pp=dp=cp=1), got " +
                           plan.label() + " (" + std::to_string(plan.gpus()) + " ranks)");
}

DeviceTrainer::DeviceTrainer(DeviceKernels& kernels, const core::ModelSpec& model, int seq_len,
                             std::uint64_t seed, const core::ParallelPlan& plan,
                             OptimizerConfig optimizer)
    : kernels_(kernels),
      shape_(one_rank_shape(model, seq_len, plan)),
      micro_batches_(plan.micro_batches()),
      optimizer_(optimizer),
      workspace_(kernels, shape_),
      activation_(kernels, activation_elements(shape_)) {
  for (int mb = 0; mb < micro_batches_; ++mb) {
    inputs_.push_back(upload(kernels, micro_batch_input(shape_, seed, mb)));
    targets_.push_back(upload(kernels, micro_batch_target(shape_, seed, mb)));
  }
  layers_.reserve(static_cast<std::size_t>(model.layers));
  for (int l = 0; l < model.layers; ++l)
    layers_.push_back(
        {upload_layer(kernels, init_layer(shape_, seed, l, 0)), zero_device_layer(kernels, shape_),
         zero_device_state(kernels, optimizer, shape_), DeviceStash(kernels, shape_)});
}

double DeviceTrainer::step() {
  const DeviceTpReduce no_tp = [](float*, std::size_t) {};
  for (Layer& l : layers_)
    for (DeviceBuffer* g : l.grads.all()) kernels_.fill_zero(g->data(), g->size());
  double loss = 0;
  const std::size_t n = activation_elements(shape_);
  const double denominator = static_cast<double>(n) * micro_batches_;
  // One stage: 1F1B is each micro-batch's forward, then its backward.
  for (std::size_t mb = 0; mb < inputs_.size(); ++mb) {
    kernels_.copy(inputs_[mb].data(), activation_.data(), n);
    for (Layer& l : layers_)
      device_layer_forward(kernels_, l.weights, shape_, activation_.data(), activation_.data(),
                           l.stash, workspace_, no_tp);
    loss += kernels_.squared_error(activation_.data(), targets_[mb].data(), activation_.data(), n,
                                   denominator);
    for (auto it = layers_.rbegin(); it != layers_.rend(); ++it)
      device_layer_backward(kernels_, it->weights, shape_, it->stash, activation_.data(),
                            activation_.data(), it->grads, workspace_, no_tp);
  }
  for (Layer& l : layers_)
    device_optimizer_update(kernels_, optimizer_, iteration_ + 1, l.weights, l.grads, l.state);
  kernels_.synchronize();
  ++iteration_;
  return loss;
}

LayerTensors DeviceTrainer::weights(int layer) const {
  return download_layer(kernels_, layers_.at(static_cast<std::size_t>(layer)).weights, shape_);
}

std::size_t DeviceTrainer::device_bytes() const {
  std::size_t floats = activation_.size();
  for (const auto* set : {&inputs_, &targets_})
    for (const DeviceBuffer& b : *set) floats += b.size();
  for (const DeviceBuffer* b : {&workspace_.a, &workspace_.b, &workspace_.dact, &workspace_.du,
                                &workspace_.dctx, &workspace_.dqkv, &workspace_.dprobs})
    floats += b->size();
  std::size_t bytes = floats * sizeof(float);
  for (const Layer& l : layers_) {
    for (const auto* set : {&l.weights, &l.grads, &l.state.m, &l.state.v})
      for (const DeviceBuffer* b : set->all()) bytes += b->size() * sizeof(float);
    bytes += l.stash.bytes();
  }
  return bytes;
}

}  // namespace parashift::hw
