#include "tools/cli/command.hpp"

namespace parashift::tools {

// Registered by the run subcommand's owner; until then the subcommand does not exist.
void add_run_command(CLI::App& app, CliContext& ctx) {
  (void)app;
  (void)ctx;
}

}  // namespace parashift::tools
