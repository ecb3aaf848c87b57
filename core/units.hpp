// Units and conversions. Simulated time is integer nanoseconds; rates are
// bytes per second (_Bps) and FLOP per second (_flops_per_s).
#pragma once

#include <cmath>
#include <cstdint>

namespace parashift::core {

using TimeNs = std::int64_t;

constexpr TimeNs kNsPerUs = 1'000;
constexpr TimeNs kNsPerMs = 1'000'000;
constexpr TimeNs kNsPerS = 1'000'000'000;

constexpr double gbps(double gigabits_per_s) {
  return gigabits_per_s * 1e9 / 8.0;
}
constexpr double gigabytes_per_s(double gb_per_s) {
  return gb_per_s * 1e9;
}
constexpr double tera_flops(double tflops) {
  return tflops * 1e12;
}
constexpr double gib(double n) {
  return n * 1024.0 * 1024.0 * 1024.0;
}

constexpr double ns_to_s(TimeNs t_ns) {
  return static_cast<double>(t_ns) * 1e-9;
}

/// Rounds a duration in seconds to integer nanoseconds (never negative).
inline TimeNs seconds_to_ns(double seconds) {
  return seconds <= 0.0 ? 0 : static_cast<TimeNs>(std::llround(seconds * 1e9));
}

/// Time to push `bytes` through a rate of `rate_Bps`, in nanoseconds.
inline TimeNs transfer_ns(double bytes, double rate_Bps) {
  return seconds_to_ns(bytes / rate_Bps);
}

}  // namespace parashift::core
