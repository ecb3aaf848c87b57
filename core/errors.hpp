// The one error model of parashift. Every error the library reports is a
// core::Error of one of three tiers, each with its exit status:
//   InputError        bad user input (file, field, option, CSV row): exit 2,
//                     the message names where and what was expected;
//   EnvironmentError  the machine, not the input (no GPU, an MPI failure, a
//                     path that cannot be written): exit 3, the message says
//                     what to do;
//   InternalError     a broken invariant (PARASHIFT_ASSERT): exit 1.
// Library code throws; only the CLI's main maps an error to an exit status
// (tools/cli/run_cli.cpp). This header depends on nothing but the standard
// library, so topologies/ may derive its TopologyError from InputError.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace parashift::core {

/// The base of every parashift error; exit_status() is what the CLI returns.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  [[nodiscard]] virtual int exit_status() const noexcept = 0;
};

/// Bad user input. The CLI prints what() on one line and exits with status 2.
class InputError : public Error {
 public:
  explicit InputError(const std::string& message) : Error(message) {}
  [[nodiscard]] int exit_status() const noexcept override { return 2; }
};

/// The environment cannot do what was asked (missing GPU, MPI failure,
/// unwritable path). what() is the problem; remedy() what the user can do.
class EnvironmentError : public Error {
 public:
  EnvironmentError(const std::string& problem, std::string remedy)
      : Error(problem), remedy_(std::move(remedy)) {}
  [[nodiscard]] int exit_status() const noexcept override { return 3; }
  [[nodiscard]] const std::string& remedy() const noexcept { return remedy_; }

 private:
  std::string remedy_;
};

/// The environment error for an output file that cannot be opened.
inline EnvironmentError unwritable_path(const std::string& path) {
  return EnvironmentError(path + ": cannot open for writing",
                          "check that its directory exists and that you may write there");
}

/// A broken internal invariant: a bug in parashift, never the user's input.
class InternalError : public Error {
 public:
  explicit InternalError(const std::string& message) : Error(message) {}
  [[nodiscard]] int exit_status() const noexcept override { return 1; }
};

}  // namespace parashift::core
