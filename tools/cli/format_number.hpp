// A number in a printf format, for the commands' text output.
#pragma once

#include <cstdio>
#include <string>

namespace parashift::tools {

/// `format` is a printf conversion for one double, e.g. "%.3f".
inline std::string fmt(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

}  // namespace parashift::tools
