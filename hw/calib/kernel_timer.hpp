// Times a kernel: `repeats` runs after one warm-up run, best and median, in
// wall time or in this thread's CPU time (on a shared machine a short kernel's
// CPU time is its cost on a core, whatever share of a core the process gets;
// calib/cpu_share.hpp measures that share separately).
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

#include <time.h>

namespace parashift::hw {

struct KernelTime {
  double best_s = 0;
  double median_s = 0;
};

enum class KernelClock { Wall, ThreadCpu };

inline double clock_s(KernelClock clock) {
  if (clock == KernelClock::Wall)
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

template <typename Kernel>
KernelTime time_kernel(int repeats, Kernel&& kernel, KernelClock clock = KernelClock::Wall) {
  kernel();  // warm caches and allocations
  std::vector<double> seconds;
  for (int r = 0; r < std::max(1, repeats); ++r) {
    const double start = clock_s(clock);
    kernel();
    seconds.push_back(clock_s(clock) - start);
  }
  std::sort(seconds.begin(), seconds.end());
  return {seconds.front(), seconds[seconds.size() / 2]};
}

}  // namespace parashift::hw
