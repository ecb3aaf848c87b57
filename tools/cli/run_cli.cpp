#include <cstdlib>
#include <exception>
#include <string>

#include "core/errors.hpp"
#include "tools/cli/command.hpp"

#ifndef PARASHIFT_VERSION
#define PARASHIFT_VERSION "0.0.0"
#endif

namespace parashift::tools {

namespace {

// Under a launcher (mpirun, srun) every rank reads the same input and would
// report the same mistake: only the first rank prints it (all exit 2).
bool first_rank_or_alone() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    const char* value = std::getenv(name);
    if (value != nullptr) return std::string(value) == "0";
  }
  return true;
}

}  // namespace

int report_error(const std::exception& error, std::ostream& err) {
  const auto* known = dynamic_cast<const core::Error*>(&error);
  const int status = known != nullptr ? known->exit_status() : 1;
  if (status == 1) {
    // Not the user's doing: every rank reports it, so a bug on one rank is seen.
    err << "parashift: internal error: " << error.what() << "\n";
    return 1;
  }
  if (!first_rank_or_alone()) return status;
  err << "parashift: error: " << error.what();
  if (const auto* env = dynamic_cast<const core::EnvironmentError*>(&error)) {
    if (!env->remedy().empty()) err << " (" << env->remedy() << ")";
  }
  err << "\n";
  return status;
}

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
  add_sweep_command(app, ctx);
  add_run_command(app, ctx);
  add_calibrate_command(app, ctx);
  add_collectives_command(app, ctx);
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
    if (first_rank_or_alone()) err << "parashift: error: " << e.what() << " (see --help)\n";
    return 2;
  } catch (const std::exception& e) {
    return report_error(e, err);
  }
  return ctx.status;
}

}  // namespace parashift::tools
