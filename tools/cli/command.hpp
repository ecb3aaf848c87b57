// The contract between the CLI's subcommands and its main: each subcommand
// lives in its own file and registers itself on the app.
#pragma once

#include <exception>
#include <ostream>

#include <CLI/CLI.hpp>

namespace parashift::tools {

/// Streams a subcommand writes to and the exit status it leaves. Errors are
/// reported by throwing one of core/errors.hpp's tiers (core::InputError,
/// core::EnvironmentError, core::InternalError or a class derived from one):
/// run_cli prints the message on one line and returns its exit status.
struct CliContext {
  std::ostream& out;
  std::ostream& err;
  int status = 0;
  bool quiet = false;  // -q,--quiet: no progress bar (tools/cli/progress.hpp)
};

void add_simulate_command(CLI::App& app, CliContext& ctx);
void add_validate_command(CLI::App& app, CliContext& ctx);
void add_plan_command(CLI::App& app, CliContext& ctx);
void add_topo_command(CLI::App& app, CliContext& ctx);
void add_faults_command(CLI::App& app, CliContext& ctx);
void add_sweep_command(CLI::App& app, CliContext& ctx);
void add_run_command(CLI::App& app, CliContext& ctx);
void add_calibrate_command(CLI::App& app, CliContext& ctx);
void add_collectives_command(CLI::App& app, CliContext& ctx);

/// The one place an error becomes an exit status: prints `error` on one line
/// to `err` and returns 2 (core::InputError), 3 (core::EnvironmentError, its
/// remedy in brackets) or 1 (core::InternalError or any other exception, as
/// "internal error"). Under a launcher only the first rank prints input and
/// environment errors; every rank prints internal ones.
int report_error(const std::exception& error, std::ostream& err);

/// The whole command line: parses argv, runs the subcommand, returns the
/// exit status (0 ok, 1 internal failure, 2 bad input or bad option,
/// 3 the environment: no GPU, an MPI failure, an unwritable path).
int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace parashift::tools
