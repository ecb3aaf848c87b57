// Invariants that stay on in every build type (SimGrid's xbt_assert):
//   PARASHIFT_ASSERT(t_ns >= now_ns_, "event in the past: t_ns=", t_ns, " now_ns=", now_ns_);
// A failed check throws core::InternalError naming the file, the line, the
// condition and the context; the CLI prints it as "internal error" and exits
// with status 1 (library code never calls exit()). The context is streamed
// only when the check fails, so a passing check costs one branch.
#pragma once

#include <sstream>
#include <string>

#include "core/errors.hpp"

namespace parashift::core::detail {

/// __FILE__ without the leading "../" that ccache's base_dir leaves (the
/// path relative to the build folder, "../../core/x.cpp" -> "core/x.cpp").
constexpr const char* repository_path(const char* file) {
  while (file[0] == '.' && file[1] == '.' && file[2] == '/') file += 3;
  return file;
}

template <typename... Context>
[[noreturn]] void assert_failed(const char* condition, const char* file, int line,
                                const Context&... context) {
  std::ostringstream message;
  message << repository_path(file) << ":" << line << ": check '" << condition << "' failed";
  if constexpr (sizeof...(Context) > 0) {
    message << ": ";
    (message << ... << context);
  }
  throw InternalError(message.str());
}

}  // namespace parashift::core::detail

#define PARASHIFT_ASSERT(condition, ...)                                             \
  do {                                                                               \
    if (!(condition)) [[unlikely]] {                                                 \
      ::parashift::core::detail::assert_failed(#condition, __FILE__,                 \
                                               __LINE__ __VA_OPT__(, ) __VA_ARGS__); \
    }                                                                                \
  } while (false)
