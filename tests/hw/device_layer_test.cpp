// The device layer and optimizer (hw/device/) on HostKernels against the
// reference layer and optimizer (hw/model/layer.cpp, optimizer.cpp): the
// same weights and inputs give the same outputs, input gradients, weight
// gradients and optimizer steps, for one tensor-parallel rank and for two. These check every GEMM's
// operand order, strides and batching and every kernel's arguments, which the CUDA flavour shares
// (tests/hw/cuda_conformance.cpp runs the same comparisons on a GPU).
#include <doctest/doctest.h>

#include <thread>

#include "core/input_error.hpp"
#include "hw/calib/predict.hpp"
#include "hw/comm/self_communicator.hpp"
#include "hw/comm/thread_communicator.hpp"
#include "hw/device/device_calibration.hpp"
#include "hw/device/device_layer.hpp"
#include "hw/device/host_kernels.hpp"
#include "hw/model/synthetic_data.hpp"
#include "tests/hw/device_compare.hpp"
#include "tests/hw/hw_test_model.hpp"

using namespace parashift;

namespace {

// Two sequences of 8 tokens, 4 heads of width 8 (2 per rank when tp = 2).
hw::LayerShape shape(int tp) {
  return {32, 4, 64, tp, 8, 2};
}

// HostKernels run Eigen's own kernels on strided maps of the same data, so
// today the two sides agree bit for bit (measured: every difference 0). The
// bound leaves room for a different blocking (float rounding, 2^-24 = 6e-8
// per operation, over sums of at most 64 terms), and is still five orders
// of magnitude below what a wrong operand or offset does (the sensitivity
// case below: 0.4).
constexpr double kTolerance = 1e-5;

}  // namespace

TEST_CASE("device layer on host kernels equals the CPU layer, one tensor-parallel rank") {
  hw::SelfCommunicator self;
  hw::HostKernels k;
  const test::LayerDiffs d = test::compare_device_layer(k, shape(1), 0, self);
  CHECK(d.output < kTolerance);
  CHECK(d.probs < kTolerance);
  CHECK(d.dx < kTolerance);
  CHECK(d.grads < kTolerance);
  CHECK(k.live_buffers() == 0);
}

TEST_CASE("device layer on host kernels equals the CPU layer, two tensor-parallel ranks") {
  // Each rank's output and input gradient are sums over both ranks (the
  // all-reduces), so a wrong shard offset on either rank shows on both.
  auto group = hw::make_thread_group(2);
  test::LayerDiffs d[2];
  std::thread other([&] {
    hw::HostKernels k;
    d[1] = test::compare_device_layer(k, shape(2), 1, *group[1]);
  });
  hw::HostKernels k;
  d[0] = test::compare_device_layer(k, shape(2), 0, *group[0]);
  other.join();
  CHECK(d[0].worst() < kTolerance);
  CHECK(d[1].worst() < kTolerance);
}

TEST_CASE("the comparison is sensitive: K and V swapped on the device show") {
  // A head batched with the wrong column offset would read another part of
  // QKV. The device code is right, so the mix-up is made in its input
  // instead: K and V weight columns swapped on the device side must show far
  // above the tolerance, or the comparisons above could not see such a bug.
  const hw::LayerShape s = shape(1);
  hw::HostKernels k;
  hw::LayerTensors w = hw::init_layer(s, 7, 3, 0);
  const hw::Matrix x = hw::micro_batch_input(s, 7, 0);
  hw::LayerStash stash;
  const hw::Matrix y = hw::layer_forward(w, s, x, stash, [](hw::Matrix&) {});
  const hw::Matrix k_cols = w.wqkv.middleCols(32, 32);
  w.wqkv.middleCols(32, 32) = w.wqkv.middleCols(64, 32);
  w.wqkv.middleCols(64, 32) = k_cols;
  const hw::DeviceLayerTensors dw = hw::upload_layer(k, w);
  hw::DeviceStash dstash(k, s);
  hw::DeviceWorkspace ws(k, s);
  hw::DeviceBuffer act(k, static_cast<std::size_t>(x.size()));
  k.upload(std::span<const float>(x.data(), act.size()), act.data());
  hw::device_layer_forward(k, dw, s, act.data(), act.data(), dstash, ws,
                           hw::DeviceTpComm{[](float*, std::size_t) {}, {}, {}});
  hw::Matrix out(s.tokens(), s.hidden);
  k.download(act.data(), std::span<float>(out.data(), act.size()));
  CHECK(test::rel_diff(out, y) > 1e-3);
}

TEST_CASE("weights made on the device are init_layer's, bit for bit") {
  // Each tensor-parallel rank's four shards for tp 1 and 2: the same
  // counter-based values (synthetic_values.hpp), so exactly equal.
  for (const int tp : {1, 2})
    for (int tp_rank = 0; tp_rank < tp; ++tp_rank) {
      CAPTURE(tp);
      CAPTURE(tp_rank);
      hw::HostKernels k;
      const hw::LayerShape s = shape(tp);
      const hw::LayerTensors expected = hw::init_layer(s, 11, 2, tp_rank);
      const hw::LayerTensors got =
          hw::download_layer(k, hw::init_device_layer(k, s, 11, 2, tp_rank), s);
      for (std::size_t i = 0; i < 4; ++i) CHECK(*got.all()[i] == *expected.all()[i]);
    }
}

TEST_CASE("device optimizer step equals the CPU optimizer, SGD and Adam") {
  for (auto kind : {hw::OptimizerKind::Sgd, hw::OptimizerKind::Adam}) {
    CAPTURE(hw::to_string(kind));
    hw::HostKernels k;
    CHECK(test::compare_device_optimizer(k, kind, shape(1)) < kTolerance);
  }
}

TEST_CASE("the executor on given kernels with resident data trains as on its own") {
  // HwBackend on a HostKernels it is handed, the data set kept in its
  // memory, against HwBackend on its own kernels making the data every
  // micro-batch: the same five losses (they fall step by step, so a lost
  // gradient, a stale resident sample or a wrong optimizer step would part
  // them by far more than 1e-5).
  for (auto kind : {hw::OptimizerKind::Sgd, hw::OptimizerKind::Adam}) {
    CAPTURE(hw::to_string(kind));
    hw::HostKernels k;
    CHECK(test::compare_device_executor(k, kind, 5) < kTolerance);
    CHECK(k.live_buffers() == 0);  // every device buffer released
  }
}

TEST_CASE("device calibration covers every kernel the predictor asks for") {
  // calibrate_device_kernels on host kernels for the tiny one-rank plan: the
  // calibrated prediction of the executor's iteration on these kernels exists (every
  // GEMM shape and kernel of the op list is in the profile, or
  // predict_iteration would throw naming it) and is a positive time. How
  // close it comes is a measurement (README, "CUDA flavour"), not a check.
  const auto model = test::tiny_model();
  const auto plan = test::tiny_plan(1, 1, 1);
  hw::ExecutorJob job;
  job.model = &model;
  job.plan = &plan;
  job.seq_len = test::kTinySeq;
  hw::HostKernels k;
  const hw::CalibrationProfile profile =
      hw::calibrate_device_kernels(k, hw::executor_layer_shape(job), 3);
  CHECK(profile.device == "host-eigen-fp32");
  // One point per distinct GEMM kernel of the layer's forward and backward.
  CHECK(profile.gemm.size() == hw::distinct_gemms(hw::executor_layer_shape(job)).size());
  for (const auto& g : profile.gemm) CHECK(g.flops_per_s > 0);
  CHECK(profile.memory_Bps > 0);
  const auto predicted = hw::predict_iteration(job, profile);
  CHECK(predicted.iteration_ns > 0);
  CHECK(predicted.layer_backward_ns > 0);
  CHECK(k.live_buffers() == 0);
}
