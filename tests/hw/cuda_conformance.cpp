// hw_cuda_conformance [DEVICE]: the CUDA flavour's device layer, optimizer
// and executor (CudaKernels, FP32 GEMMs) against the CPU executor
// (tests/hw/device_compare.hpp), on shapes that cover the kernels' edge
// cases: score rows shorter and longer than a thread block (seq 8 and 384),
// several sequences per micro-batch, two heads per call. Prints every
// largest relative difference; exit 0 when all are within the bounds below,
// 1 when one is not, 77 when no GPU is visible (ctest: skipped).
#include <charconv>
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>

#include "hw/comm/self_communicator.hpp"
#include "hw/cuda/cuda_kernels.hpp"
#include "hw/cuda/cuda_probe.hpp"
#include "tests/hw/device_compare.hpp"

using namespace parashift;

namespace {

// cuBLAS sums in another order than Eigen (split-K, FMA), and expf / tanhf
// differ from Eigen's vectorised exp / tanh by an ulp or two: float
// rounding (6e-8 per operation) over sums of up to 1024 terms through one
// layer gives about 1e-5 at worst; 1e-4 bounds it with room. The executor's
// losses go through 4 layers and 5 optimizer steps: 1e-3.
constexpr double kLayerBound = 1e-4;
constexpr double kLossBound = 1e-3;

bool report(const std::string& what, double diff, double bound) {
  const bool ok = diff <= bound;
  std::printf("  %-52s %.3g  (bound %.0e) %s\n", what.c_str(), diff, bound, ok ? "ok" : "FAIL");
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  int device = 0;
  if (argc > 2) {
    std::fprintf(stderr, "usage: hw_cuda_conformance [DEVICE]\n");
    return 2;
  }
  if (argc == 2) {
    const std::string_view text = argv[1];
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), device);
    if (error != std::errc() || end != text.data() + text.size() || device < 0) {
      std::fprintf(stderr, "DEVICE: expected a GPU index (0, 1, ...), got '%s'\n", argv[1]);
      return 2;
    }
  }
  const hw::CudaProbe probe = hw::probe_cuda();
  if (device >= static_cast<int>(probe.devices.size())) {
    std::printf("no CUDA device %d visible (%s): nothing to check\n", device,
                probe.note.empty() ? "fewer devices" : probe.note.c_str());
    return 77;
  }
  try {
    hw::CudaKernels kernels(device, hw::CudaMath::Fp32);
    std::printf("%s against the CPU executor (largest relative difference)\n",
                kernels.name().c_str());
    bool ok = true;
    hw::SelfCommunicator self;
    const hw::LayerShape shapes[] = {{32, 4, 64, 1, 8, 2}, {256, 2, 1024, 1, 384, 2}};
    for (const int tp : {1, 2}) {
      hw::LayerShape s = shapes[1];
      s.tp = tp;
      ok &= report("weights made on the GPU, tp " + std::to_string(tp) + " (bit for bit)",
                   test::compare_device_init(kernels, s), 0.0);
    }
    for (const hw::LayerShape& s : shapes) {
      const test::LayerDiffs d = test::compare_device_layer(kernels, s, 0, self);
      const std::string at =
          "hidden " + std::to_string(s.hidden) + " seq " + std::to_string(s.seq_len) + ": ";
      ok &= report(at + "layer output", d.output, kLayerBound);
      ok &= report(at + "attention probabilities", d.probs, kLayerBound);
      ok &= report(at + "input gradient", d.dx, kLayerBound);
      ok &= report(at + "weight gradients (accumulated)", d.grads, kLayerBound);
    }
    {
      // TF32 rounds GEMM inputs to 10 mantissa bits (2^-11 = 5e-4 relative
      // per product; sums of many such errors partly cancel): 1e-2 bounds a
      // layer's outputs and flags a broken TF32 path, not TF32's rounding.
      hw::CudaKernels tf32(device, hw::CudaMath::Tf32);
      const test::LayerDiffs d = test::compare_device_layer(tf32, shapes[1], 0, self);
      ok &= report("tf32, hidden 256 seq 384: worst of the four", d.worst(), 1e-2);
    }
    for (auto kind : {hw::OptimizerKind::Sgd, hw::OptimizerKind::Adam}) {
      const std::string name = hw::to_string(kind);
      ok &= report(name + ": three optimizer steps",
                   test::compare_device_optimizer(kernels, kind, shapes[0]), kLayerBound);
      ok &= report(name + ": five executor losses, GPU against CPU",
                   test::compare_device_executor(kernels, kind, 5), kLossBound);
    }
    std::printf(ok ? "conformance: ok\n" : "conformance: FAILED\n");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::printf("conformance: error: %s\n", e.what());
    return 1;
  }
}
