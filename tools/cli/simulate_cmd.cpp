#include <algorithm>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/input_error.hpp"
#include "core/input_file.hpp"
#include "core/scenario/scenario.hpp"
#include "core/scenario/shared_cluster.hpp"
#include "sim/report.hpp"
#include "sim/run.hpp"
#include "sim/shared_report.hpp"
#include "sim/trace.hpp"
#include "tools/cli/command.hpp"
#include "tools/cli/output_file.hpp"
#include "tools/cli/output_path.hpp"
#include "tools/cli/pipeline_svg.hpp"
#include "tools/cli/progress.hpp"
#include "tools/cli/run_report.hpp"

namespace parashift::tools {

namespace {

struct SimulateOptions {
  std::string scenario;
  std::string json_path;
  std::string trace_path;
  std::string svg_path;
  std::string links_path;
  std::vector<std::string> overrides;
  std::string compare;  // KEY=VALUE for a second run
  std::optional<int> iterations;
  std::optional<long long> seed;
};

void write_trace(const std::string& path, const sim::TraceRecorder& trace,
                 const core::Scenario& scenario, const sim::IterationResult& result) {
  std::vector<std::string> workers, groups, links;
  for (const auto& w : result.workers) {
    workers.push_back("stage " + std::to_string(w.stage) + " replica " + std::to_string(w.replica) +
                      " cp " + std::to_string(w.cp_rank));
  }
  for (int s = 0; s < scenario.plan.pp; ++s) {
    for (int c = 0; c < scenario.plan.cp; ++c) {
      groups.push_back("dp group: stage " + std::to_string(s) + " cp " + std::to_string(c));
    }
  }
  for (const auto& link : scenario.topology.links()) links.push_back(link.name);
  std::ofstream file = open_output_file(path);
  trace.write(file, workers, groups, links);
}

// One row per link of the topology, in its order: what the last iteration
// put on it (zeros for a link that stayed idle).
void write_link_csv(const std::string& path, const core::Scenario& scenario,
                    const sim::IterationResult& result) {
  std::ofstream file = open_output_file(path);
  file << "link,bandwidth_Bps,bytes,busy_s,utilisation\n";
  const double iteration_s = core::ns_to_s(result.iteration_ns);
  const auto& links = scenario.topology.links();
  std::vector<double> bytes(links.size(), 0.0), busy_s(links.size(), 0.0);
  for (const auto& use : result.links) {
    const auto i = static_cast<std::size_t>(use.link);
    bytes[i] += use.bytes;
    busy_s[i] += core::ns_to_s(use.busy_ns);
  }
  for (std::size_t i = 0; i < links.size(); ++i) {
    file << links[i].name << ',' << links[i].bandwidth_Bps << ',' << bytes[i] << ',' << busy_s[i]
         << ',' << (iteration_s > 0 ? busy_s[i] / iteration_s : 0.0) << '\n';
  }
}

// The summary with the policy's part as every run writes it (run_report.hpp).
nlohmann::json simulate_json(const core::Scenario& scenario, const sim::RunSummary& run) {
  nlohmann::json j = sim::summary_json(scenario, run);
  j.update(
      policy_json({run.policy_modules, run.directives, run.stragglers, run.failures, run.notes}));
  return j;
}

// A scenario with `jobs:`: every job on one cluster, sharing its links.
void run_shared(const SimulateOptions& opts, const std::vector<std::string>& overrides,
                const std::string& text, CliContext& ctx) {
  const std::pair<const char*, const std::string*> single_job_only[] = {
      {"--compare", &opts.compare},
      {"--trace", &opts.trace_path},
      {"--svg", &opts.svg_path},
      {"--links", &opts.links_path}};
  for (const auto& [flag, value] : single_job_only)
    if (!value->empty())
      throw core::InputError(std::string(flag) + ": not available for a shared cluster (" +
                             opts.scenario + " has jobs:)");
  core::SharedCluster cluster = core::parse_shared_cluster(text, opts.scenario, overrides);
  if (opts.iterations)
    for (core::SharedJob& job : cluster.jobs) job.scenario.run.iterations = *opts.iterations;
  const sim::SharedClusterResult result = sim::run_shared_cluster(cluster);
  sim::print_shared_cluster(ctx.out, cluster, result);
  if (!opts.json_path.empty())
    write_json_file(opts.json_path, sim::shared_cluster_json(cluster, result));
}

void run_simulate(const SimulateOptions& opts, CliContext& ctx) {
  check_output_path("--json", opts.json_path);
  check_output_path("--trace", opts.trace_path);
  check_output_path("--svg", opts.svg_path);
  check_output_path("--links", opts.links_path);
  std::vector<std::string> overrides = opts.overrides;
  if (opts.iterations) overrides.push_back("run.iterations=" + std::to_string(*opts.iterations));
  if (opts.seed) overrides.push_back("run.seed=" + std::to_string(*opts.seed));
  const std::string text = core::read_input_file(opts.scenario, "scenario file");
  if (core::is_shared_cluster(text)) return run_shared(opts, overrides, text, ctx);
  const core::Scenario scenario = core::parse_scenario(text, opts.scenario, overrides);
  if (!opts.links_path.empty() && !scenario.run.contention) {
    throw core::InputError("--links needs the max-min network (run.network: maxmin)");
  }
  sim::TraceRecorder trace;
  const bool traced = !opts.trace_path.empty() || !opts.svg_path.empty();
  sim::RunSummary run;
  {
    Progress bar(ctx, "iterations");
    run = sim::run_scenario(scenario, traced ? &trace : nullptr,
                            [&bar](std::int64_t done, std::int64_t planned) {
                              bar.update(done, std::max(done, planned));
                            });
  }
  sim::print_summary(ctx.out, scenario, run);
  // The failures the last failed step saw (one fail event can take a
  // node's GPUs at once) ended the run when it did not go on.
  for (const core::FailureSeen& f : run.failures) {
    const core::FailureSeen& last = run.failures.back();
    const bool ending = run.ended_on_failure && f.at_ns == last.at_ns;
    ctx.out << (ending ? "run ended: " : "recovered: ") << core::to_string(f) << "\n";
  }
  if (!opts.trace_path.empty()) write_trace(opts.trace_path, trace, scenario, run.last);
  if (!opts.svg_path.empty()) {
    std::ofstream file = open_output_file(opts.svg_path);
    write_timeline_svg(file, pipeline_timeline(scenario, trace, run.last));
  }
  if (!opts.links_path.empty()) write_link_csv(opts.links_path, scenario, run.last);
  if (opts.compare.empty()) {
    if (!opts.json_path.empty()) write_json_file(opts.json_path, simulate_json(scenario, run));
    return;
  }
  // The same scenario with one more override, e.g. policy.balance=off.
  std::vector<std::string> other_overrides = overrides;
  other_overrides.push_back(opts.compare);
  const core::Scenario other = core::load_scenario(opts.scenario, other_overrides);
  const sim::RunSummary other_run = sim::run_scenario(other);
  ctx.out << "\n--- with " << opts.compare << " ---\n";
  sim::print_summary(ctx.out, other, other_run);
  sim::print_comparison(ctx.out, "as written", run, opts.compare, other_run);
  if (!opts.json_path.empty()) {
    write_json_file(opts.json_path,
                    {{"compare", opts.compare},
                     {"runs", {simulate_json(scenario, run), simulate_json(other, other_run)}}});
  }
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
  cmd->add_option("--trace", opts->trace_path,
                  "Write a Chrome/Perfetto trace of the first iteration to FILE (open it in "
                  "ui.perfetto.dev)")
      ->type_name("FILE");
  cmd->add_option("--svg", opts->svg_path,
                  "Draw the first iteration's pipeline (the replica that finished last: each "
                  "stage's passes, bubbles and gradient syncs) as SVG to FILE")
      ->type_name("FILE");
  cmd->add_option("--links", opts->links_path,
                  "Write bytes, busy time and utilisation of every link (idle ones as zeros) in "
                  "the last iteration as CSV to FILE")
      ->type_name("FILE");
  cmd->add_option("--compare", opts->compare,
                  "Run the scenario a second time with one more override (e.g. "
                  "policy.balance=off) and print both side by side")
      ->type_name("KEY=VALUE");
  cmd->add_option("--set", opts->overrides,
                  "Override a scenario field, e.g. --set plan.tp=4 (repeatable)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  add_quiet_flag(*cmd, ctx);
  cmd->add_option("--iterations", opts->iterations, "Iterations to run (overrides run.iterations)")
      ->check(CLI::Range(1, 100000000))
      ->type_name("N");
  cmd->add_option("--seed", opts->seed, "Seed of every random draw (overrides run.seed)")
      ->check(CLI::NonNegativeNumber)
      ->type_name("S");
  cmd->footer(
      "Examples:\n"
      "  parashift simulate scenarios/default.yaml\n"
      "  parashift simulate scenarios/default.yaml --set plan.tp=4 --set plan.pp=8 --json "
      "out.json\n"
      "  parashift simulate scenarios/default.yaml --svg pipeline.svg\n"
      "  parashift simulate scenarios/straggler-gpu-1.5x.yaml --compare policy.balance=off");
  cmd->callback([opts, &ctx] { run_simulate(*opts, ctx); });
}

}  // namespace parashift::tools
