#include "tools/cli/progress.hpp"

#include <unistd.h>

#include <iostream>

namespace parashift::tools {

namespace {

constexpr int kWidth = 40;

bool terminal_stderr(const CliContext& ctx) {
  return &ctx.err == &std::cerr && isatty(STDERR_FILENO) == 1;
}

}  // namespace

Progress::Progress(const CliContext& ctx, std::string unit)
    : Progress(ctx.err, !ctx.quiet && terminal_stderr(ctx), std::move(unit), kDelay) {}

Progress::Progress(std::ostream& out, bool enabled, std::string unit,
                   std::chrono::steady_clock::duration delay)
    : out_(out),
      enabled_(enabled),
      unit_(std::move(unit)),
      start_(std::chrono::steady_clock::now()),
      delay_(delay) {}

Progress::~Progress() {
  finish();
}

void Progress::finish() {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (drawn_) out_ << "\n" << std::flush;
  drawn_ = false;
  enabled_ = false;
}

void Progress::update(long long done, long long total) {
  if (!enabled_ || total <= 0) return;
  const std::lock_guard<std::mutex> lock(mutex_);
  if (std::chrono::steady_clock::now() - start_ < delay_) return;
  const int filled = static_cast<int>(std::min(done, total) * kWidth / total);
  // Redraw when the bar or the count moved; a line per call would flood a
  // slow terminal on a 10,000-point sweep.
  if (filled == last_filled_ && done != total && done - last_done_ < total / 100 + 1) return;
  last_filled_ = filled;
  last_done_ = done;
  out_ << "\r[" << std::string(static_cast<std::size_t>(filled), '#')
       << std::string(static_cast<std::size_t>(kWidth - filled), ' ') << "] " << done << "/"
       << total << " " << unit_ << std::flush;
  drawn_ = true;
}

void add_quiet_flag(CLI::App& cmd, CliContext& ctx) {
  cmd.add_flag("-q,--quiet", ctx.quiet, "No progress bar (it is drawn only on a terminal)");
}

}  // namespace parashift::tools
