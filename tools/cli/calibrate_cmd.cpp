#include "tools/cli/command.hpp"

namespace parashift::tools {

// Registered by the calibrate subcommand's owner; until then the subcommand does not exist.
void add_calibrate_command(CLI::App& app, CliContext& ctx) {
  (void)app;
  (void)ctx;
}

}  // namespace parashift::tools
