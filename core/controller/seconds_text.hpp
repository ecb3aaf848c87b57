// "12.345 s": a duration in the decision log's messages (one format for
// every module).
#pragma once

#include <cstdio>
#include <string>

namespace parashift::core {

inline std::string seconds_text(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f s", seconds);
  return buf;
}

}  // namespace parashift::core
