#include "hw/calib/collective_sweep.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <span>
#include <stdexcept>

namespace parashift::hw {

namespace {

// Rank r's element i: r + 1 + i mod 8. Sums over 2..2^20 ranks stay exact.
float input_value(int rank, std::size_t i) {
  return static_cast<float>(rank + 1 + static_cast<int>(i % 8));
}

// The sum over `ranks` ranks of element i's inputs.
float summed_value(int ranks, std::size_t i) {
  return static_cast<float>(ranks * (ranks + 1) / 2 + ranks * static_cast<int>(i % 8));
}

struct Buffers {
  DeviceBuffer in, out;
  std::size_t in_count = 0, out_count = 0;
};

// Elements per buffer: all_reduce in place; all_gather each rank's share in,
// the whole out; reduce_scatter the whole in, each rank's share out.
Buffers make_buffers(DeviceKernels& kernels, core::CollectiveKind kind, std::size_t count,
                     int ranks) {
  Buffers b;
  const auto n = static_cast<std::size_t>(ranks);
  switch (kind) {
    case core::CollectiveKind::AllReduce:
      b.in_count = count;
      break;
    case core::CollectiveKind::AllGather:
      b.in_count = count / n;
      b.out_count = b.in_count * n;
      break;
    case core::CollectiveKind::ReduceScatter:
      b.out_count = count / n;
      b.in_count = b.out_count * n;
      break;
    default:
      throw std::invalid_argument(sweep_unsupported(kind));
  }
  b.in = DeviceBuffer(kernels, b.in_count);
  if (b.out_count > 0) b.out = DeviceBuffer(kernels, b.out_count);
  return b;
}

void fill_inputs(DeviceKernels& kernels, Buffers& b, int rank) {
  std::vector<float> host(b.in_count);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = input_value(rank, i);
  kernels.upload(host, b.in.data());
}

void call(Communicator& world, core::CollectiveKind kind, Buffers& b) {
  switch (kind) {
    case core::CollectiveKind::AllReduce:
      world.all_reduce_sum(std::span<float>(b.in.data(), b.in_count));
      break;
    case core::CollectiveKind::AllGather:
      world.all_gather(std::span<const float>(b.in.data(), b.in_count),
                       std::span<float>(b.out.data(), b.out_count));
      break;
    default:  // ReduceScatter (make_buffers refused the others)
      world.reduce_scatter_sum(std::span<const float>(b.in.data(), b.in_count),
                               std::span<float>(b.out.data(), b.out_count));
      break;
  }
}

// Elements of this rank's result that differ from the exact one.
long long count_wrong(DeviceKernels& kernels, core::CollectiveKind kind, Buffers& b, int rank,
                      int ranks) {
  const bool in_place = kind == core::CollectiveKind::AllReduce;
  std::vector<float> host(in_place ? b.in_count : b.out_count);
  kernels.download(in_place ? b.in.data() : b.out.data(), host);
  long long wrong = 0;
  for (std::size_t i = 0; i < host.size(); ++i) {
    float expected = 0;
    if (kind == core::CollectiveKind::AllReduce) {
      expected = summed_value(ranks, i);
    } else if (kind == core::CollectiveKind::AllGather) {
      expected = input_value(static_cast<int>(i / b.in_count), i % b.in_count);
    } else {  // this rank's block of the reduced whole
      expected = summed_value(ranks, static_cast<std::size_t>(rank) * b.out_count + i);
    }
    if (host[i] != expected) ++wrong;
  }
  return wrong;
}

}  // namespace

const char* sweep_unsupported(core::CollectiveKind kind) {
  switch (kind) {
    case core::CollectiveKind::AllReduce:
    case core::CollectiveKind::AllGather:
    case core::CollectiveKind::ReduceScatter:
      return "";
    default:
      return "runs all_reduce, all_gather and reduce_scatter (the communicator has no all-to-all, "
             "and a send/recv pair is one message: use --backend analytical or sim for those)";
  }
}

std::vector<SweepPoint> measure_collective(Communicator& world, DeviceKernels& kernels,
                                           core::CollectiveKind kind,
                                           const std::vector<double>& sizes, int warmup,
                                           int iters) {
  const int ranks = world.size();
  const int rank = world.rank();
  std::vector<SweepPoint> points;
  for (double size : sizes) {
    const auto count = static_cast<std::size_t>(size / sizeof(float));
    Buffers b = make_buffers(kernels, kind, count, ranks);
    fill_inputs(kernels, b, rank);
    kernels.synchronize();
    call(world, kind, b);  // checked, then the warm-up
    kernels.synchronize();
    double wrong = static_cast<double>(count_wrong(kernels, kind, b, rank, ranks));
    for (int w = 0; w < warmup; ++w) call(world, kind, b);
    kernels.synchronize();
    world.barrier();
    const auto start = std::chrono::steady_clock::now();
    for (int k = 0; k < iters; ++k) call(world, kind, b);
    kernels.synchronize();
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() /
        std::max(1, iters);
    world.all_reduce_max(std::span<double>(&seconds, 1));  // the slowest rank's
    world.all_reduce_sum(std::span<double>(&wrong, 1));
    const std::size_t used = kind == core::CollectiveKind::AllGather ? b.out_count : b.in_count;
    points.push_back(
        {static_cast<double>(used * sizeof(float)), seconds, static_cast<long long>(wrong)});
  }
  return points;
}

}  // namespace parashift::hw
