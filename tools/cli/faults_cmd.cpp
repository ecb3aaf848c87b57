// `parashift faults SCENARIO`: a fault-injection campaign, in-memory
// snapshots + spares against periodic remote checkpoints + full restart.
//
// Until the scenario loader reads `faults:` itself, this command splits the
// file: the `faults:` block is read here with read_fault_config, and the
// rest goes to core::parse_scenario with the block's lines blanked (so line
// numbers in its messages stay right).
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <yaml-cpp/yaml.h>

#include "core/faults/fault_config.hpp"
#include "core/input_error.hpp"
#include "core/scenario/scenario.hpp"
#include "core/scenario/yaml_fields.hpp"
#include "sim/faults/campaign.hpp"
#include "tools/cli/command.hpp"
#include "tools/cli/output_file.hpp"

namespace parashift::tools {

namespace {

struct FaultsOptions {
  std::string scenario;
  int seeds = 100;
  double days = 0;  // 0: faults.days
  std::string json_path;
  std::string trace_path;
  std::vector<std::string> overrides;
};

// Blanks the lines of the top-level `faults:` block (its key line and every
// following line that is indented, blank or a comment).
std::string without_faults_block(const std::string& text) {
  std::istringstream in(text);
  std::string out;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    const bool top_level = !line.empty() && line[0] != ' ' && line[0] != '\t' && line[0] != '#';
    if (top_level) inside = line.rfind("faults:", 0) == 0;
    out += (inside ? std::string() : line) + "\n";
  }
  return out;
}

void run_faults(const FaultsOptions& opts, CliContext& ctx) {
  std::ifstream in(opts.scenario);
  if (!in) throw core::InputError(opts.scenario + ": cannot open scenario file");
  std::stringstream text;
  text << in.rdbuf();
  YAML::Node root;
  try {
    root = YAML::Load(text.str());
  } catch (const YAML::Exception& e) {
    throw core::InputError(opts.scenario + ":" + std::to_string(e.mark.line + 1) + ":" +
                           std::to_string(e.mark.column + 1) + ": malformed YAML: " + e.msg);
  }
  if (!root.IsMap() || !root["faults"] || root["faults"].IsNull()) {
    throw core::InputError(opts.scenario + ": faults: missing; expected a faults section");
  }
  std::vector<std::string> scenario_overrides, fault_overrides;
  for (const auto& o : opts.overrides) {
    (o.rfind("faults.", 0) == 0 ? fault_overrides : scenario_overrides).push_back(o);
  }
  YAML::Node faults_root(YAML::NodeType::Map);
  faults_root["faults"] = root["faults"];
  core::apply_overrides(faults_root, fault_overrides);
  std::set<std::string> overridden;
  for (const auto& o : fault_overrides) overridden.insert(o.substr(0, o.find('=')));
  core::YamlFields faults(faults_root["faults"], "faults", opts.scenario, &overridden);
  const core::FaultConfig config = core::read_fault_config(faults);

  const core::Scenario scenario =
      core::parse_scenario(without_faults_block(text.str()), opts.scenario, scenario_overrides);
  auto setup = sim::make_campaign_setup(scenario, config);
  sim::CampaignOptions campaign;
  campaign.seeds = opts.seeds;
  campaign.days = opts.days > 0 ? opts.days : config.days;
  if (!opts.trace_path.empty()) {
    campaign.trace = sim::read_failure_trace(opts.trace_path, setup->targets, scenario.topology);
  }
  const bool tty = &ctx.err == &std::cerr && isatty(STDERR_FILENO) == 1;
  if (tty) {
    campaign.progress = [&ctx](int done, int total) {
      const int width = 40;
      const int filled = done * width / total;
      ctx.err << "\r[" << std::string(static_cast<std::size_t>(filled), '#')
              << std::string(static_cast<std::size_t>(width - filled), ' ') << "] " << done << "/"
              << total << " seeds" << (done == total ? "\n" : "") << std::flush;
    };
  }
  const sim::CampaignResult result = sim::run_campaign(*setup, campaign);
  sim::print_campaign(ctx.out, *setup, result);
  if (!opts.json_path.empty()) write_json_file(opts.json_path, sim::to_json(*setup, result));
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
  cmd->add_option("--seeds", opts->seeds, "Independent runs (failure draws)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--days", opts->days, "Simulated days per run (default: faults.days)")
      ->check(CLI::Range(0.0, 3650.0));
  cmd->add_option("--json", opts->json_path, "Also write the results as JSON to FILE")
      ->type_name("FILE");
  cmd->add_option("--trace", opts->trace_path,
                  "Replay failures from a CSV (time_s,kind,target) instead of drawing them")
      ->type_name("FAILURES.csv");
  cmd->add_option("--set", opts->overrides,
                  "Override a scenario field, e.g. --set faults.spares=0 (repeatable)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  cmd->callback([opts, &ctx] { run_faults(*opts, ctx); });
}

}  // namespace parashift::tools
