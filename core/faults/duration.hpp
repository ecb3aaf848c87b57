// Durations written in scenario files: a number and a unit, parsed strictly.
#pragma once

#include <string>

#include "core/units.hpp"

namespace parashift::core {

/// "250ms", "30s", "10min", "3h", "2d" (a non-negative decimal number, then
/// exactly one of ms, s, min, h, d; no space, no sign). Throws InputError
/// "expected a duration like 30s, 10min, 3h (units ms, s, min, h, d), found '...'".
TimeNs parse_strict_duration_ns(const std::string& text);

/// Shortest exact spelling for messages and JSON: "1h", "90s", "1.5s".
std::string format_duration_text(TimeNs duration_ns);

}  // namespace parashift::core
