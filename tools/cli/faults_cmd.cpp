// `parashift faults SCENARIO`: a fault-injection campaign, in-memory
// snapshots + spares against periodic remote checkpoints + full restart.
// The scenario's `faults:` section configures the campaign.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/faults/fault_config.hpp"
#include "core/input_error.hpp"
#include "core/scenario/scenario.hpp"
#include "sim/faults/campaign.hpp"
#include "tools/cli/campaign_svg.hpp"
#include "tools/cli/command.hpp"
#include "tools/cli/number_check.hpp"
#include "tools/cli/output_file.hpp"
#include "tools/cli/output_path.hpp"
#include "tools/cli/progress.hpp"

namespace parashift::tools {

namespace {

struct FaultsOptions {
  std::string scenario;
  int seeds = 100;
  std::optional<double> days;  // absent: faults.days
  std::string json_path;
  std::string trace_path;
  std::string svg_path;
  std::vector<std::string> overrides;
};

void run_faults(const FaultsOptions& opts, CliContext& ctx) {
  check_output_path("--json", opts.json_path);
  check_output_path("--svg", opts.svg_path);
  const core::Scenario scenario = core::load_scenario(opts.scenario, opts.overrides);
  if (!scenario.faults) {
    throw core::InputError(opts.scenario + ": faults: missing; expected a faults section");
  }
  const core::FaultConfig& config = *scenario.faults;
  auto setup = sim::make_campaign_setup(scenario, config);
  sim::CampaignOptions campaign;
  campaign.seeds = opts.seeds;
  campaign.days = opts.days.value_or(config.days);
  if (!opts.trace_path.empty()) {
    campaign.trace = sim::read_failure_trace(opts.trace_path, setup->targets, scenario.topology);
  }
  sim::CampaignResult result;
  {
    Progress bar(ctx, "seeds");
    campaign.progress = [&bar](int done, int total) { bar.update(done, total); };
    result = sim::run_campaign(*setup, campaign);
  }
  sim::print_campaign(ctx.out, *setup, result);
  if (!opts.json_path.empty()) write_json_file(opts.json_path, sim::to_json(*setup, result));
  if (!opts.svg_path.empty()) {
    std::ofstream file = open_output_file(opts.svg_path);
    write_campaign_svg(file, result, scenario.name);
  }
}

}  // namespace

void add_faults_command(CLI::App& app, CliContext& ctx) {
  auto opts = std::make_shared<FaultsOptions>();
  CLI::App* cmd = app.add_subcommand(
      "faults",
      "Fault-injection campaign: ETTR, lost work, recovery time and snapshot overhead of "
      "in-memory snapshots + spares vs remote checkpoints + full restart");
  cmd->add_option("scenario", opts->scenario, "Scenario YAML file with a faults: section")
      ->required();
  cmd->add_option("--seeds", opts->seeds, "Independent runs (failure draws), 1 to 100000")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str()
      ->type_name("N");
  cmd->add_option("--days", opts->days,
                  "Simulated days per run, > 0 and <= 3650 (default: faults.days, else 30)")
      ->check(number_check(0, false, 3650, "a number of days"))
      ->type_name("D");
  cmd->add_option("--json", opts->json_path, "Also write the results as JSON to FILE")
      ->type_name("FILE");
  cmd->add_option("--svg", opts->svg_path,
                  "Also draw the distributions as SVG to FILE: time lost per seed (1 - ETTR), "
                  "lost work and recovery time per interruption, both policies")
      ->type_name("FILE");
  cmd->add_option("--trace", opts->trace_path,
                  "Replay failures from a CSV (time_s,kind,target) instead of drawing them")
      ->type_name("FAILURES.csv");
  cmd->add_option("--set", opts->overrides,
                  "Override a scenario field, e.g. --set faults.spares=0 (repeatable)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  cmd->footer(
      "Examples:\n"
      "  parashift faults scenarios/faults-llama3-405b-16k.yaml --seeds 10 --days 7\n"
      "  parashift faults scenarios/faults-llama3-405b-16k.yaml --seeds 20 --svg campaign.svg\n"
      "  parashift faults scenarios/faults-llama3-405b-16k.yaml --set faults.spares=0 --json "
      "f.json");
  add_quiet_flag(*cmd, ctx);
  cmd->callback([opts, &ctx] { run_faults(*opts, ctx); });
}

}  // namespace parashift::tools
