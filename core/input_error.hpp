// The user-input error tier: an exception carrying where the bad input is
// and what was expected. Broken invariants use assert instead.
#pragma once

#include <stdexcept>
#include <string>

namespace parashift::core {

/// Bad user input (file, field, option, CSV row). The CLI prints what() on
/// one line and exits with status 2.
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace parashift::core
