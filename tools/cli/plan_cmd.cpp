// parashift plan SCENARIO: search every valid plan for the scenario's model,
// cluster and training, print the best ones, where the scenario's own plan
// ranks, and which cost terms make the best one win.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/input_error.hpp"
#include "core/plan_json.hpp"
#include "core/planner/plan_compare.hpp"
#include "core/planner/plan_pins.hpp"
#include "core/planner/planner.hpp"
#include "core/scenario/cluster_view.hpp"
#include "core/scenario/scenario.hpp"
#include "tools/cli/command.hpp"
#include "tools/cli/format_number.hpp"
#include "tools/cli/output_file.hpp"
#include "tools/cli/output_path.hpp"

namespace parashift::tools {

namespace {

struct PlanOptions {
  std::string scenario;
  std::string json_path;
  std::vector<std::string> overrides;
  std::vector<std::string> pins;
  int top = 10;
};

std::string pad(std::string text, std::size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

std::string lpad(const std::string& text, std::size_t width) {
  return text.size() < width ? std::string(width - text.size(), ' ') + text : text;
}

double gib_of(double bytes) {
  return bytes / core::gib(1);
}

// "5128 = 2^3 x 641": why a GPU count may have no valid split.
std::string factorised(int n) {
  std::string out = std::to_string(n) + " =";
  const char* sep = " ";
  for (int p = 2; n > 1; ++p) {
    if (static_cast<long long>(p) * p > n) p = n;
    int k = 0;
    while (n % p == 0) {
      n /= p;
      ++k;
    }
    if (k == 0) continue;
    out += sep + std::to_string(p) + (k > 1 ? "^" + std::to_string(k) : "");
    sep = " x ";
  }
  return out;
}

nlohmann::json ranked_json(const core::RankedPlan& r) {
  const core::IterationEstimate& e = r.estimate;
  nlohmann::json terms = nlohmann::json::object();
  for (const auto& t : core::compare_terms(e, e)) terms[t.term] = t.first_s;
  return {{"label", r.label},
          {"plan", nlohmann::json(r.plan)},
          {"iteration_time_s", core::ns_to_s(e.total_ns)},
          {"tokens_per_s", e.tokens_per_s},
          {"mfu", e.mfu},
          {"peak_memory_bytes", e.memory.total_bytes()},
          {"bubble_share", e.bubble_share()},
          {"dp_exposed_s", core::ns_to_s(e.dp_comm_exposed_ns)},
          {"terms_s", terms}};
}

void print_row(std::ostream& out, const std::string& rank, const core::RankedPlan& r,
               std::size_t label_width) {
  const core::IterationEstimate& e = r.estimate;
  out << lpad(rank, 5) << "  " << pad(r.label, label_width)
      << lpad(fmt("%.3f", core::ns_to_s(e.total_ns)), 9) << lpad(fmt("%.0f", e.tokens_per_s), 11)
      << lpad(fmt("%.1f", 100.0 * e.mfu), 7) << lpad(fmt("%.1f", gib_of(e.memory.total_bytes())), 9)
      << lpad(fmt("%.1f", 100.0 * e.bubble_share()), 9)
      << lpad(fmt("%.3f", core::ns_to_s(e.dp_comm_exposed_ns)), 10) << "\n";
}

// The best against `other`, term by term, biggest difference first.
nlohmann::json explain(std::ostream& out, const core::RankedPlan& best,
                       const core::RankedPlan& other, const std::string& name) {
  const auto terms = core::compare_terms(best.estimate, other.estimate);
  const double gap_s = core::ns_to_s(other.estimate.total_ns - best.estimate.total_ns);
  const double other_s = core::ns_to_s(other.estimate.total_ns);
  out << "  vs " << name << " (" << other.label << "): " << fmt("%.3f", gap_s) << " s faster ("
      << fmt("%.2f", other_s > 0 ? 100.0 * gap_s / other_s : 0.0) << "% of its iteration)\n";
  out << "    " << pad("term", 16) << lpad("best s", 10) << lpad(name + " s", 16)
      << lpad("other-best s", 14) << "\n";
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& t : terms) {
    out << "    " << pad(t.term, 16) << lpad(fmt("%.3f", t.first_s), 10)
        << lpad(fmt("%.3f", t.second_s), 16) << lpad(fmt("%+.3f", t.delta_s()), 14) << "\n";
    rows.push_back({{"term", t.term}, {"best_s", t.first_s}, {"other_s", t.second_s}});
  }
  const double best_gib = gib_of(best.estimate.memory.total_bytes());
  const double other_gib = gib_of(other.estimate.memory.total_bytes());
  out << "    " << pad("memory GiB", 16) << lpad(fmt("%.1f", best_gib), 10)
      << lpad(fmt("%.1f", other_gib), 16) << lpad(fmt("%+.1f", other_gib - best_gib), 14) << "\n";
  std::string named;
  for (std::size_t i = 0; i < terms.size() && i < 2; ++i) {
    if (std::abs(terms[i].delta_s()) < 0.0005) break;
    named += (named.empty() ? "" : ", then ") + terms[i].term + " (" +
             fmt("%+.3f", terms[i].delta_s()) + " s)";
  }
  out << "    biggest differences: " << (named.empty() ? "none above 1 ms" : named) << "\n";
  return {{"other", other.label},
          {"faster_by_s", gap_s},
          {"terms", rows},
          {"memory_gib", {{"best", best_gib}, {"other", other_gib}}}};
}

// No plan meets the pins: names the first pin that no plan meets on its own,
// or says the pins conflict, and throws (exit 2).
[[noreturn]] void refuse_pins(const core::PlannerInput& in, const std::vector<std::string>& pins) {
  const std::string where = "on " + factorised(in.cluster.gpus) + " GPUs (" +
                            std::to_string(in.cluster.gpus_per_node) + " per node), " +
                            in.model.name + ", global batch " + std::to_string(in.global_batch);
  for (const auto& item : pins) {
    core::PlannerInput alone = in;
    alone.pins = core::parse_pins({item});
    alone.reference.reset();
    core::PlannerOptions count_only;
    count_only.top_k = 1;
    if (core::search_plans(alone, count_only).stats.enumerated == 0) {
      throw core::InputError("--pin " + item + ": no valid plan has it " + where +
                             " (each size must divide the GPUs, and tp the heads)");
    }
  }
  throw core::InputError("--pin: no valid plan meets all of " + core::describe(in.pins) +
                         " together " + where);
}

void run_plan(const PlanOptions& opts, CliContext& ctx) {
  check_output_path("--json", opts.json_path);
  const core::PlanPins pins = core::parse_pins(opts.pins);
  core::ScenarioOptions load;
  load.plan_optional = true;  // the search needs no plan of its own
  const core::Scenario scenario = core::load_scenario(opts.scenario, opts.overrides, load);

  core::PlannerInput in = core::planner_input_of(scenario);
  in.pins = pins;
  if (scenario.has_plan) in.reference = scenario.plan;
  core::PlannerOptions options;
  options.top_k = opts.top;
  const core::PlanSearch found = core::search_plans(in, options);
  if (found.stats.enumerated == 0 && !opts.pins.empty()) refuse_pins(in, opts.pins);
  const core::SearchStats& st = found.stats;
  core::DeviceSpec least = in.device;
  least.hbm_bytes = core::least_hbm_bytes(in.device_groups, in.device);
  const double limit_bytes = core::usable_memory_bytes(least, options.memory_margin);

  std::ostream& out = ctx.out;
  out << "plan: " << scenario.name << ": " << scenario.model.name << " on "
      << core::describe_devices(scenario.device_groups, scenario.device, in.cluster.gpus) << " ("
      << in.cluster.gpus_per_node << " per node), global batch " << in.global_batch << ", seq "
      << in.seq_len << ", " << core::to_string(in.precision) << "\n";
  out << "pins: " << core::describe(pins) << "\n";
  out << "search: " << st.enumerated << " valid plans, " << st.pruned_by_memory
      << " over the memory limit (" << fmt("%.1f", gib_of(limit_bytes))
      << " GiB = " << fmt("%.0f", 100.0 * (1.0 - options.memory_margin)) << "% of HBM), "
      << st.evaluated << " evaluated in " << fmt("%.1f", st.wall_ms) << " ms\n\n";

  nlohmann::json json = {
      {"scenario", scenario.name},
      {"model", scenario.model.name},
      {"device", scenario.device.name},
      {"devices", core::describe_devices(scenario.device_groups, scenario.device, in.cluster.gpus)},
      {"gpus", in.cluster.gpus},
      {"gpus_per_node", in.cluster.gpus_per_node},
      {"global_batch", in.global_batch},
      {"seq_len", in.seq_len},
      {"pins", core::describe(pins)},
      {"search",
       {{"enumerated", st.enumerated},
        {"pruned_by_memory", st.pruned_by_memory},
        {"evaluated", st.evaluated},
        {"wall_ms", st.wall_ms},
        {"memory_limit_bytes", limit_bytes}}}};

  if (found.top.empty()) {
    out << "no valid plan fits: "
        << (st.enumerated == 0 ? "no split of " + factorised(in.cluster.gpus) +
                                     " GPUs into tp x pp x cp x dp meets the model, "
                                     "batch and pins"
                               : "every valid plan exceeds the memory limit")
        << "\n";
    json["top"] = nlohmann::json::array();
  } else {
    std::size_t width = 4;
    for (const auto& r : found.top) width = std::max(width, r.label.size());
    if (found.reference) width = std::max(width, found.reference->ranked.label.size());
    width += 2;
    out << lpad("rank", 5) << "  " << pad("plan", width) << lpad("iter s", 9)
        << lpad("tokens/s", 11) << lpad("MFU %", 7) << lpad("mem GiB", 9) << lpad("bubble %", 9)
        << lpad("dp exp s", 10) << "\n";
    nlohmann::json top = nlohmann::json::array();
    for (std::size_t i = 0; i < found.top.size(); ++i) {
      print_row(out, std::to_string(i + 1), found.top[i], width);
      nlohmann::json row = ranked_json(found.top[i]);
      row["rank"] = i + 1;
      top.push_back(row);
    }
    json["top"] = top;

    if (found.reference) {
      const core::ReferenceStanding& ref = *found.reference;
      // A plan the search did not enumerate is not among the ranked ones: say
      // where it would stand, not a rank that belongs to a listed plan.
      const bool listed = ref.in_space && ref.fits_memory;
      std::string standing =
          !ref.valid         ? "not valid for this cluster"
          : !ref.fits_memory ? "over the memory limit"
          : listed ? "rank " + std::to_string(ref.rank) + " of " + std::to_string(st.evaluated)
                   : "would rank " + std::to_string(ref.rank) + " among the " +
                         std::to_string(st.evaluated) + " evaluated";
      if (ref.valid && !ref.matches_pins) {
        standing += ", outside the pins";
      } else if (ref.valid && ref.fits_memory && !ref.in_space) {
        standing +=
            " (the search does not enumerate it, e.g. layers that do not split evenly "
            "over pp x virtual stages; the ranks above do not count it)";
      }
      if (!scenario.plan_problem.empty()) standing += ": " + scenario.plan_problem;
      out << "\nscenario plan: " << standing << "\n";
      if (ref.valid) print_row(out, listed ? std::to_string(ref.rank) : "-", ref.ranked, width);
      json["scenario_plan"] = ranked_json(ref.ranked);
      json["scenario_plan"]["rank"] = ref.rank;
      json["scenario_plan"]["valid"] = ref.valid;
      json["scenario_plan"]["fits_memory"] = ref.fits_memory;
      json["scenario_plan"]["matches_pins"] = ref.matches_pins;
      json["scenario_plan"]["in_space"] = ref.in_space;
    }

    out << "\nwhy the best wins\n";
    nlohmann::json why = nlohmann::json::object();
    const core::RankedPlan& best = found.top.front();
    if (found.top.size() > 1) why["vs_runner_up"] = explain(out, best, found.top[1], "runner-up");
    if (found.reference && found.reference->valid && found.reference->ranked.label != best.label) {
      why["vs_scenario_plan"] = explain(out, best, found.reference->ranked, "scenario");
    }
    json["why"] = why;
  }
  if (!opts.json_path.empty()) write_json_file(opts.json_path, json);
}

}  // namespace

void add_plan_command(CLI::App& app, CliContext& ctx) {
  auto opts = std::make_shared<PlanOptions>();
  CLI::App* cmd =
      app.add_subcommand("plan",
                         "Search every valid plan for a scenario's model and cluster, rank them by "
                         "estimated iteration time and explain why the best one wins");
  cmd->add_option("scenario", opts->scenario, "Scenario YAML file (its plan is the one compared)")
      ->required();
  cmd->add_option("--top", opts->top, "How many of the best plans to show, 1 to 1000")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str()
      ->type_name("N");
  cmd->add_option("--set", opts->overrides,
                  "Override a scenario field, e.g. --set training.global_batch=1024 (repeatable)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  cmd->add_option("--pin", opts->pins,
                  "Fix one plan dimension in the search, e.g. --pin tp=8 or --pin "
                  "plan.schedule=1f1b (repeatable)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  cmd->add_option("--json", opts->json_path, "Also write the result as JSON to FILE")
      ->type_name("FILE");
  cmd->footer(
      "Examples:\n"
      "  parashift plan scenarios/default.yaml --top 5\n"
      "  parashift plan scenarios/default.yaml --set cluster.topology.nodes=64 --pin tp=8");
  cmd->callback([opts, &ctx] { run_plan(*opts, ctx); });
}

}  // namespace parashift::tools
