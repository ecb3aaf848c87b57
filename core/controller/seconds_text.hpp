// "12.345 s", "0.839 s", "3.349 ms", "12.500 us": a duration in the
// decision log's messages (one format for every module) with at least three
// significant digits: seconds from 0.1 s, milliseconds below, microseconds
// below 1 ms, so an executor's millisecond iterations read as such instead
// of "0.003 s" (and two of them differ).
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

namespace parashift::core {

inline std::string seconds_text(double seconds) {
  char buf[48];
  const double a = std::fabs(seconds);
  if (a == 0 || a >= 0.1) {
    std::snprintf(buf, sizeof buf, "%.3f s", seconds);
  } else if (a >= 1e-3) {
    std::snprintf(buf, sizeof buf, "%.3f ms", seconds * 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.3f us", seconds * 1e6);
  }
  return buf;
}

}  // namespace parashift::core
