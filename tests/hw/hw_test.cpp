#include <doctest/doctest.h>

#include "hw/cpu/gemm_probe.hpp"
#include "hw/cuda/cuda_probe.hpp"

using namespace parashift;

TEST_CASE("the CPU GEMM probe computes the right product and a positive rate") {
  const int m = 48, n = 40, k = 32;
  const auto g = hw::measure_cpu_gemm(m, n, k, 2);
  // Reference: the probe's inputs are A(i,j) = ((i + 2j) mod 7) / 7 and
  // B(i,j) = ((3i + j) mod 5) / 5; sum every entry of A * B by hand.
  double expected = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      for (int p = 0; p < k; ++p) expected += ((i + 2 * p) % 7) / 7.0 * (((3 * p + j) % 5) / 5.0);
  CHECK(g.checksum == doctest::Approx(expected).epsilon(1e-5));
  CHECK(g.seconds > 0);
  CHECK(g.flops_per_s == doctest::Approx(2.0 * m * n * k / g.seconds));
}

TEST_CASE("the CUDA probe reports how it was built") {
  const auto probe = hw::probe_cuda();
#ifdef PARASHIFT_HAVE_CUDA
  CHECK(probe.built_with_cuda);
  CHECK(probe.nccl_version > 0);
#else
  CHECK_FALSE(probe.built_with_cuda);
#endif
  // Without a visible GPU the probe says why instead of inventing a device.
  if (probe.devices.empty()) CHECK_FALSE(probe.note.empty());
}
