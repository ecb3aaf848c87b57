// What one HwBackend iteration measures (its StepReport's raw material),
// and the wall-clock timer its phases use; shared by hw_backend*.cpp.
#pragma once

#include <chrono>

#include "core/units.hpp"
#include "hw/exec/hw_backend.hpp"

namespace parashift::hw {

struct HwBackend::Counters {
  core::TimeNs compute_ns = 0, optimizer_ns = 0, tp_ns = 0, pp_ns = 0, dp_ns = 0, wall_ns = 0;
  double tp_bytes = 0, pp_bytes = 0, dp_bytes = 0;
  double peak_stash_bytes = 0;
  double loss = 0;
};

inline core::TimeNs now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Adds the wall time since construction to `sink` when it goes out of scope.
class ScopedTimer {
 public:
  explicit ScopedTimer(core::TimeNs& sink) : sink_(sink), start_(now_ns()) {}
  ~ScopedTimer() { sink_ += now_ns() - start_; }
  ScopedTimer(const ScopedTimer&) = delete;
  ScopedTimer& operator=(const ScopedTimer&) = delete;

 private:
  core::TimeNs& sink_;
  core::TimeNs start_;
};

}  // namespace parashift::hw
