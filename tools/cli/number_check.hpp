// CLI11 checks for numeric options whose message says what was expected
// ("expected a number > 0, found '-1'"); CLI11's PositiveNumber and
// NonNegativeNumber print a range up to the largest double instead.
#pragma once

#include <cmath>
#include <exception>
#include <string>

#include <CLI/CLI.hpp>

namespace parashift::tools {

/// A finite number above `low` (or at it, with `inclusive`).
inline CLI::Validator number_from(double low, bool inclusive) {
  const std::string bound =
      std::string(inclusive ? ">= " : "> ") + (low == 0 ? std::string("0") : std::to_string(low));
  return CLI::Validator(
      [low, inclusive, bound](std::string& text) -> std::string {
        const std::string expected = "expected a number " + bound + ", found '" + text + "'";
        double value = 0;
        try {
          std::size_t used = 0;
          value = std::stod(text, &used);
          if (used != text.size()) return expected;
        } catch (const std::exception&) {
          return expected;
        }
        if (!std::isfinite(value) || value < low || (!inclusive && value == low)) return expected;
        return "";
      },
      "NUMBER " + bound);
}

inline CLI::Validator positive_number() {
  return number_from(0, false);
}
inline CLI::Validator non_negative_number() {
  return number_from(0, true);
}

}  // namespace parashift::tools
