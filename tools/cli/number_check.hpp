// CLI11 checks for numeric options whose message says what was expected
// ("expected a number > 0, found '-1'"); CLI11's PositiveNumber and
// NonNegativeNumber print a range up to the largest double instead.
#pragma once

#include <cmath>
#include <exception>
#include <limits>
#include <string>

#include <CLI/CLI.hpp>

namespace parashift::tools {

/// A finite number above `low` (or at it, with `low_inclusive`) and at most
/// `high`; `what` names it in the message ("a number of days").
inline CLI::Validator number_check(double low, bool low_inclusive,
                                   double high = std::numeric_limits<double>::infinity(),
                                   const std::string& what = "a number") {
  auto text_of = [](double x) {
    std::string s = std::to_string(x);
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.') s.pop_back();
    return s;
  };
  std::string bound = std::string(low_inclusive ? ">= " : "> ") + text_of(low);
  if (std::isfinite(high)) bound += " and <= " + text_of(high);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        const std::string expected = "expected " + what + " " + bound + ", found '" + text + "'";
        double value = 0;
        try {
          std::size_t used = 0;
          value = std::stod(text, &used);
          if (used != text.size()) return expected;
        } catch (const std::exception&) {
          return expected;
        }
        if (!std::isfinite(value) || value < low || (!low_inclusive && value == low) ||
            value > high)
          return expected;
        return "";
      },
      "NUMBER " + bound);
}

inline CLI::Validator positive_number() {
  return number_check(0, false);
}
inline CLI::Validator non_negative_number() {
  return number_check(0, true);
}

}  // namespace parashift::tools
