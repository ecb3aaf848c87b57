#include <exception>

#include "core/input_error.hpp"
#include "tools/cli/command.hpp"
#include "topologies/topology.hpp"

#ifndef PARASHIFT_VERSION
#define PARASHIFT_VERSION "0.0.0"
#endif

namespace parashift::tools {

int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app{
      "parashift: plan, simulate and re-decide how large-model training is split across GPUs"};
  app.name("parashift");
  app.set_version_flag("--version", std::string("parashift ") + PARASHIFT_VERSION);
  app.require_subcommand(1);
  app.fallthrough(false);
  CliContext ctx{out, err};
  add_simulate_command(app, ctx);
  add_plan_command(app, ctx);
  add_validate_command(app, ctx);
  add_topo_command(app, ctx);
  add_faults_command(app, ctx);
  add_run_command(app, ctx);
  add_calibrate_command(app, ctx);
  std::string names;
  bool known = false;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    names += (names.empty() ? "" : ", ") + sub->get_name();
    known = known || (argc > 1 && sub->get_name() == argv[1]);
  }
  if (argc > 1 && argv[1][0] != '-' && !known) {
    err << "parashift: error: unknown subcommand '" << argv[1] << "' (expected one of: " << names
        << ")\n";
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e, out, err);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e, out, err);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e, out, err);
  } catch (const CLI::ParseError& e) {
    err << "parashift: error: " << e.what() << " (see --help)\n";
    return 2;
  } catch (const core::InputError& e) {
    err << "parashift: error: " << e.what() << "\n";
    return 2;
  } catch (const topo::TopologyError& e) {
    err << "parashift: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    err << "parashift: internal error: " << e.what() << "\n";
    return 1;
  }
  return ctx.status;
}

}  // namespace parashift::tools
