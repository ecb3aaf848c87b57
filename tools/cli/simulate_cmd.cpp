#include <memory>
#include <string>
#include <vector>

#include "core/scenario/scenario.hpp"
#include "sim/report.hpp"
#include "sim/sim_backend.hpp"
#include "tools/cli/command.hpp"
#include "tools/cli/output_file.hpp"

namespace parashift::tools {

namespace {

struct SimulateOptions {
  std::string scenario;
  std::string json_path;
  std::vector<std::string> overrides;
};

void run_simulate(const SimulateOptions& opts, CliContext& ctx) {
  const core::Scenario scenario = core::load_scenario(opts.scenario, opts.overrides);
  sim::SimBackend backend(scenario);
  sim::RunSummary run;
  for (int i = 0; i < scenario.run.iterations; ++i) {
    run.total_ns += backend.step(scenario.plan).iteration_ns;
  }
  run.iterations = scenario.run.iterations;
  run.simulated_iterations = backend.simulated_steps();
  run.last = backend.last_result();
  sim::print_summary(ctx.out, scenario, run);
  if (!opts.json_path.empty()) write_json_file(opts.json_path, sim::summary_json(scenario, run));
}

}  // namespace

void add_simulate_command(CLI::App& app, CliContext& ctx) {
  auto opts = std::make_shared<SimulateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "simulate",
      "Simulate one scenario on its cluster and print iteration time, throughput, "
      "MFU, bubble, exposed communication and peak memory");
  cmd->add_option("scenario", opts->scenario, "Scenario YAML file")->required();
  cmd->add_option("--json", opts->json_path, "Also write the summary as JSON to FILE")
      ->type_name("FILE");
  cmd->add_option("--set", opts->overrides,
                  "Override a scenario field, e.g. --set plan.tp=4 (repeatable)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  cmd->callback([opts, &ctx] { run_simulate(*opts, ctx); });
}

}  // namespace parashift::tools
