// What one HwBackend iteration measures (its StepReport's raw material),
// and the wall-clock timer its phases use; shared by hw_backend*.cpp.
#pragma once

#include <chrono>

#include "core/units.hpp"
#include "hw/comm/virtual_time.hpp"
#include "hw/exec/hw_backend.hpp"

namespace parashift::hw {

struct HwBackend::Counters {
  core::TimeNs compute_ns = 0, optimizer_ns = 0, tp_ns = 0, pp_ns = 0, dp_ns = 0, wall_ns = 0;
  double tp_bytes = 0, pp_bytes = 0, dp_bytes = 0;
  double peak_stash_bytes = 0;
  double loss = 0;
};

/// The rank's time: its virtual clock's when it runs on one
/// (HwOptions::virtual_clock), the machine's steady clock otherwise.
inline core::TimeNs now_ns(const VirtualClock* clock = nullptr) {
  if (clock != nullptr) return clock->now_ns();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Adds the time since construction (on `clock`, see now_ns) to `sink` when
/// it goes out of scope.
class ScopedTimer {
 public:
  ScopedTimer(core::TimeNs& sink, const VirtualClock* clock)
      : sink_(sink), clock_(clock), start_(now_ns(clock)) {}
  ~ScopedTimer() { sink_ += now_ns(clock_) - start_; }
  ScopedTimer(const ScopedTimer&) = delete;
  ScopedTimer& operator=(const ScopedTimer&) = delete;

 private:
  core::TimeNs& sink_;
  const VirtualClock* clock_;
  core::TimeNs start_;
};

}  // namespace parashift::hw
