// A progress bar on stderr for commands that run long (faults' seeds,
// sweep's points): drawn only when stderr is a terminal and --quiet is not
// given, and only once the command has run `delay` (2 s), so short runs and
// redirected output stay clean. update() may be called from any thread.
//
//   Progress bar(ctx, "points");
//   bar.update(done, total);   // "\r[#########           ] 12/48 points"
#pragma once

#include <chrono>
#include <mutex>
#include <ostream>
#include <string>

#include "tools/cli/command.hpp"

namespace parashift::tools {

class Progress {
 public:
  static constexpr std::chrono::milliseconds kDelay{2000};

  /// Draws on ctx.err when it is the process's stderr, a terminal, and
  /// ctx.quiet is off.
  Progress(const CliContext& ctx, std::string unit);
  /// Draws on `out` when `enabled`, once `delay` has passed (tests: 0).
  Progress(std::ostream& out, bool enabled, std::string unit,
           std::chrono::steady_clock::duration delay);
  /// Ends the bar's line if one was drawn.
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void update(long long done, long long total);
  /// Ends the bar's line (before the command prints its results).
  void finish();

 private:
  std::ostream& out_;
  bool enabled_;
  std::string unit_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::duration delay_;
  std::mutex mutex_;
  bool drawn_ = false;
  int last_filled_ = -1;
  long long last_done_ = -1;
};

/// Adds -q,--quiet (no progress bar) to a subcommand.
void add_quiet_flag(CLI::App& cmd, CliContext& ctx);

}  // namespace parashift::tools
