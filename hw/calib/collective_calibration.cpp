#include "hw/calib/collective_calibration.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <span>
#include <string>
#include <utility>

#include "core/input_error.hpp"
#include "hw/exec/comm_groups.hpp"

namespace parashift::hw {

namespace {

// nccl-tests' bus bandwidth of an all-reduce over n ranks.
double bus_Bps(double bytes, double seconds, double n) {
  return bytes / seconds * 2.0 * (n - 1) / n;
}

}  // namespace

std::vector<CollectivePoint> measure_all_reduce(Communicator& world, DeviceKernels& kernels,
                                                std::size_t largest_bytes, int repeats) {
  std::vector<CollectivePoint> points;
  if (world.size() <= 1) return points;
  const double n = world.size();
  for (std::size_t bytes = 4096; bytes <= largest_bytes; bytes *= 8) {
    DeviceBuffer buffer(kernels, bytes / sizeof(float));
    double best = std::numeric_limits<double>::infinity();
    for (int r = 0; r < std::max(1, repeats); ++r) {
      kernels.synchronize();
      world.barrier();
      const auto start = std::chrono::steady_clock::now();
      world.all_reduce_sum(std::span<float>(buffer.data(), buffer.size()));
      kernels.synchronize();
      double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      world.all_reduce_max(std::span<double>(&seconds, 1));  // the slowest rank's
      best = std::min(best, seconds);
    }
    points.push_back(
        {static_cast<double>(bytes), best, bus_Bps(static_cast<double>(bytes), best, n)});
  }
  return points;
}

std::vector<CollectivePoint> measure_plan_all_reduce(Communicator& world, DeviceKernels& kernels,
                                                     const core::ParallelPlan& plan,
                                                     std::size_t largest_bytes, int repeats) {
  if (world.size() != plan.gpus())
    throw core::InputError("plan " + plan.label() + " has " + std::to_string(plan.gpus()) +
                           " ranks, the job " + std::to_string(world.size()) +
                           ": its groups cannot be measured");
  const CommGroups groups = make_comm_groups(world, plan);
  std::vector<CollectivePoint> out;
  for (const auto& [name, group] : {std::pair{"tp", groups.tp.get()}, {"dp", groups.dp.get()}}) {
    if (group->size() <= 1) continue;
    const double n = group->size();
    for (CollectivePoint point : measure_all_reduce(*group, kernels, largest_bytes, repeats)) {
      world.all_reduce_max(std::span<double>(&point.seconds, 1));
      point.bus_Bps = bus_Bps(point.bytes, point.seconds, n);
      point.group = name;
      out.push_back(point);
    }
  }
  return out;
}

}  // namespace parashift::hw
