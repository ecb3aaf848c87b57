#include "core/duration.hpp"

#include <array>
#include <cmath>
#include <cstdlib>
#include <utility>

namespace parashift::core {

std::optional<TimeNs> parse_duration_ns(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !(value > 0) || !std::isfinite(value)) return std::nullopt;
  const std::string unit(end);
  constexpr std::array<std::pair<const char*, double>, 7> kUnits{{{"", 1.0},
                                                                  {"s", 1.0},
                                                                  {"ms", 1e-3},
                                                                  {"min", 60.0},
                                                                  {"h", 3600.0},
                                                                  {"d", 86400.0},
                                                                  {"us", 1e-6}}};
  for (const auto& [name, seconds] : kUnits) {
    if (unit == name) {
      const double ns = value * seconds * 1e9;
      if (ns >= 9.2e18) return std::nullopt;  // beyond int64 nanoseconds
      return static_cast<TimeNs>(std::llround(ns));
    }
  }
  return std::nullopt;
}

}  // namespace parashift::core
