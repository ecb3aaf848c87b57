#include "tests/hw/device_compare.hpp"

#include <cmath>
#include <stdexcept>

#include "hw/comm/self_communicator.hpp"
#include "hw/device/device_layer.hpp"
#include "hw/exec/hw_backend.hpp"
#include "hw/model/synthetic_data.hpp"
#include "tests/hw/hw_test_model.hpp"

namespace parashift::test {

namespace {

hw::Matrix download(hw::DeviceKernels& k, const hw::DeviceBuffer& b, Eigen::Index rows,
                    Eigen::Index cols) {
  hw::Matrix m(rows, cols);
  k.download(b.data(), std::span<float>(m.data(), static_cast<std::size_t>(m.size())));
  return m;
}

hw::DeviceBuffer upload(hw::DeviceKernels& k, const hw::Matrix& m) {
  hw::DeviceBuffer b(k, static_cast<std::size_t>(m.size()));
  k.upload(std::span<const float>(m.data(), b.size()), b.data());
  return b;
}

double worst_of(const hw::LayerTensors& a, const hw::LayerTensors& b) {
  double worst = 0;
  for (std::size_t i = 0; i < 4; ++i) worst = std::max(worst, rel_diff(*a.all()[i], *b.all()[i]));
  return worst;
}

}  // namespace

double rel_diff(const hw::Matrix& a, const hw::Matrix& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols())
    throw std::logic_error("rel_diff: shapes differ");
  const double scale = std::max(1e-30, static_cast<double>(b.cwiseAbs().maxCoeff()));
  return static_cast<double>((a - b).cwiseAbs().maxCoeff()) / scale;
}

LayerDiffs compare_device_layer(hw::DeviceKernels& k, const hw::LayerShape& s, int tp_rank,
                                hw::Communicator& tp) {
  const hw::LayerTensors w = hw::init_layer(s, 7, 3, tp_rank);
  const hw::Matrix x = hw::micro_batch_input(s, 7, 0);
  const hw::Matrix dy = hw::micro_batch_target(s, 7, 1);
  hw::LayerTensors grads = hw::init_layer(s, 9, 0, tp_rank);

  const hw::TpReduce cpu_reduce = [&](hw::Matrix& m) {
    if (s.tp > 1) tp.all_reduce_sum(std::span<float>(m.data(), static_cast<std::size_t>(m.size())));
  };
  hw::LayerStash stash;
  const hw::Matrix y = hw::layer_forward(w, s, x, stash, cpu_reduce);
  const hw::Matrix dx = hw::layer_backward(w, s, stash, dy, grads, cpu_reduce);

  const hw::DeviceTpComm device_reduce{[&](float* data, std::size_t n) {
                                         if (s.tp > 1) tp.all_reduce_sum(std::span<float>(data, n));
                                       },
                                       {},
                                       {}};
  const hw::DeviceLayerTensors dw = hw::upload_layer(k, w);
  hw::DeviceLayerTensors dg = hw::upload_layer(k, hw::init_layer(s, 9, 0, tp_rank));
  hw::DeviceStash dstash(k, s);
  hw::DeviceWorkspace ws(k, s);
  hw::DeviceBuffer act = upload(k, x);
  hw::device_layer_forward(k, dw, s, act.data(), act.data(), dstash, ws, device_reduce);
  LayerDiffs d;
  d.output = rel_diff(download(k, act, s.tokens(), s.hidden), y);
  d.probs = rel_diff(download(k, dstash.probs, stash.probs.rows(), s.seq_len), stash.probs);
  hw::DeviceBuffer grad = upload(k, dy);
  hw::device_layer_backward(k, dw, s, dstash, grad.data(), grad.data(), dg, ws, device_reduce);
  d.dx = rel_diff(download(k, grad, s.tokens(), s.hidden), dx);
  d.grads = worst_of(hw::download_layer(k, dg, s), grads);
  return d;
}

double compare_device_init(hw::DeviceKernels& k, const hw::LayerShape& s) {
  double worst = 0;
  for (int tp_rank = 0; tp_rank < s.tp; ++tp_rank)
    worst = std::max(worst,
                     worst_of(hw::download_layer(k, hw::init_device_layer(k, s, 11, 2, tp_rank), s),
                              hw::init_layer(s, 11, 2, tp_rank)));
  return worst;
}

double compare_device_optimizer(hw::DeviceKernels& k, hw::OptimizerKind kind,
                                const hw::LayerShape& s) {
  hw::OptimizerConfig config;
  config.kind = kind;
  hw::LayerTensors w = hw::init_layer(s, 1, 0, 0);
  const hw::LayerTensors g = hw::init_layer(s, 2, 1, 0);
  hw::OptimizerState state = hw::zero_state(config, s);
  hw::DeviceLayerTensors dw = hw::upload_layer(k, w);
  const hw::DeviceLayerTensors dg = hw::upload_layer(k, g);
  hw::DeviceOptimizerState dstate = hw::zero_device_state(k, config, s);
  for (long long step = 1; step <= 3; ++step) {
    hw::optimizer_update(config, step, w, g, state);
    hw::device_optimizer_update(k, config, step, dw, dg, dstate);
  }
  return worst_of(hw::download_layer(k, dw, s), w);
}

double compare_device_executor(hw::DeviceKernels& k, hw::OptimizerKind kind, int iterations) {
  const auto plan = tiny_plan(1, 1, 1);
  const auto options = tiny_options(kind, "device-executor");
  auto on_device = options;
  on_device.kernels = &k;
  on_device.resident_data = true;
  hw::SelfCommunicator world;
  hw::HwBackend reference(tiny_model(), kTinySeq, 5, plan, options, world);
  hw::HwBackend backend(tiny_model(), kTinySeq, 5, plan, on_device, world);
  double worst = 0;
  for (int i = 0; i < iterations; ++i) {
    reference.step(plan);
    backend.step(plan);
    worst = std::max(worst,
                     std::abs(backend.last_loss() - reference.last_loss()) / reference.last_loss());
  }
  return worst;
}

}  // namespace parashift::test
