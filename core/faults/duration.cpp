#include "core/faults/duration.hpp"

#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <utility>

#include "core/input_error.hpp"

namespace parashift::core {

namespace {

constexpr std::array<std::pair<const char*, double>, 5> kUnits{{
    {"ms", 1e6},
    {"s", 1e9},
    {"min", 60e9},
    {"h", 3600e9},
    {"d", 86400e9},
}};

[[noreturn]] void bad(const std::string& text) {
  throw InputError("expected a duration like 30s, 10min, 3h (units ms, s, min, h, d), found '" +
                   text + "'");
}

}  // namespace

TimeNs parse_strict_duration_ns(const std::string& text) {
  std::size_t i = 0;
  bool digits = false;
  bool dot = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      digits = true;
    } else if (c == '.' && !dot) {
      dot = true;
    } else {
      break;
    }
  }
  if (!digits || i == text.size()) bad(text);
  const std::string number = text.substr(0, i);
  const std::string unit = text.substr(i);
  for (const auto& [name, ns_per_unit] : kUnits) {
    if (unit != name) continue;
    const double value = std::stod(number) * ns_per_unit;
    if (!std::isfinite(value) || value > 9.0e18) bad(text);
    return static_cast<TimeNs>(std::llround(value));
  }
  bad(text);
}

std::string format_duration_text(TimeNs duration_ns) {
  for (auto it = kUnits.rbegin(); it != kUnits.rend(); ++it) {
    const auto unit_ns = static_cast<TimeNs>(it->second);
    if (duration_ns != 0 && duration_ns % unit_ns == 0) {
      return std::to_string(duration_ns / unit_ns) + it->first;
    }
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9gs", ns_to_s(duration_ns));
  return buf;
}

}  // namespace parashift::core
