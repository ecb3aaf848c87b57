// The contract between the CLI's subcommands and its main: each subcommand
// lives in its own file and registers itself on the app.
#pragma once

#include <ostream>

#include <CLI/CLI.hpp>

namespace parashift::tools {

/// Streams a subcommand writes to and the exit status it leaves. Bad user
/// input is reported by throwing core::InputError (or topo::TopologyError):
/// run_cli prints its message on one line and returns 2.
struct CliContext {
  std::ostream& out;
  std::ostream& err;
  int status = 0;
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

/// The whole command line: parses argv, runs the subcommand, returns the
/// exit status (0 ok, 1 internal failure, 2 bad input or bad option).
int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace parashift::tools
