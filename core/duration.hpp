// Durations as users write them in scenarios: "90s", "30min", "6h", "2d",
// "250ms", or a plain number of seconds.
#pragma once

#include <optional>
#include <string>

#include "core/units.hpp"

namespace parashift::core {

/// Nanoseconds, or nullopt when `text` is not a positive duration.
std::optional<TimeNs> parse_duration_ns(const std::string& text);

}  // namespace parashift::core
