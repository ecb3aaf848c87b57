// `parashift validate CSV [CSV ...] [--cv group] [--fit] [--json FILE]`:
// predicts every published run of ground-truth CSVs with the cost model and
// reports the error per row, per source group and overall (mean absolute
// percentage error). `--cv group` adds leave-one-source-group-out
// cross-validation (the efficiency shares fitted without each group, that
// group predicted with them) and ranks the plans of each `group`; `--fit`
// prints the shares fitted to all the rows.
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "core/validation/cross_validation.hpp"
#include "core/validation/ranking.hpp"
#include "core/validation/validation_report.hpp"
#include "tools/cli/command.hpp"
#include "tools/cli/output_path.hpp"

namespace parashift::tools {

namespace {

struct ValidateOptions {
  std::vector<std::string> csv_paths;
  std::string json_path;
  std::string cv;  // "" or "group"
  bool fit = false;
};

std::string fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

std::string pad(std::string text, std::size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

std::string lpad(const std::string& text, std::size_t width) {
  return text.size() < width ? std::string(width - text.size(), ' ') + text : text;
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : "; ") + item;
  return out.empty() ? "-" : out;
}

std::string rows_text(std::size_t n) {
  return std::to_string(n) + (n == 1 ? " row" : " rows");
}

struct Analysis {
  std::vector<core::PublishedRun> runs;
  core::CrossValidation cv;
  std::vector<core::PlanGroupRanking> ranking;  // from held-out predictions under --cv
  bool cross_validated = false;
};

Analysis analyse(const core::ValidationReport& report, bool cross_validate) {
  Analysis a;
  std::vector<double> predicted;
  for (const auto& r : report.rows) {
    a.runs.push_back(r.run);
    predicted.push_back(r.predicted_s);
  }
  if (cross_validate) {
    a.cv = core::leave_one_group_out(a.runs);
    a.cross_validated = true;
    predicted = a.cv.predicted_s;
  }
  a.ranking = core::rank_plan_groups(a.runs, predicted);
  return a;
}

void print_report(const core::ValidationReport& report, const Analysis& a, std::ostream& out) {
  out << pad("row_id", 16) << lpad("measured_s", 11) << lpad("predicted_s", 12)
      << lpad("error_%", 9) << (a.cross_validated ? lpad("held_out_%", 11) : "")
      << "  defaults applied\n";
  for (std::size_t i = 0; i < report.rows.size(); ++i) {
    const auto& r = report.rows[i];
    out << pad(r.run.row_id, 16) << lpad(fixed(r.run.measured_s, 3), 11)
        << lpad(fixed(r.predicted_s, 3), 12) << lpad(fixed(r.error_pct, 1), 9)
        << (a.cross_validated ? lpad(fixed(a.cv.error_pct[i], 1), 11) : "") << "  "
        << joined(r.run.defaults) << "\n";
  }
  for (const auto& s : report.skipped) out << "skipped " << s.reason << "\n";
  out << "\nMAPE by source group:" << (a.cross_validated ? "  (in-sample, held out)" : "") << "\n";
  const auto groups = report.by_group();
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const auto& g = groups[i];
    out << "  " << pad(g.source_group, 52) << lpad(rows_text(static_cast<std::size_t>(g.rows)), 9)
        << lpad(fixed(g.mape_pct, 2), 7) << " %";
    if (a.cross_validated) out << lpad(fixed(a.cv.groups[i].mape_pct, 2), 7) << " %";
    out << "\n";
  }
  if (!a.ranking.empty()) {
    out << "\nPlan ranking by group" << (a.cross_validated ? " (held-out predictions)" : "")
        << ":  plans  spearman  pick loss\n";
    for (const auto& g : a.ranking) {
      out << "  " << pad(g.group, 40) << lpad(std::to_string(g.plans), 6)
          << lpad(fixed(g.spearman, 2), 10) << lpad(fixed(g.pick_loss_pct, 1), 9) << " %"
          << "  (picked " << g.picked_row << ", best " << g.best_row << ")\n";
    }
  }
  out << "MAPE " << fixed(report.mape_pct(), 2) << " % over " << rows_text(report.rows.size())
      << " (" << report.skipped.size() << " skipped, " << report.malformed.size()
      << " malformed)\n";
  if (a.cross_validated) {
    out << "leave-one-group-out MAPE " << fixed(a.cv.mape_pct(), 2) << " % over "
        << rows_text(report.rows.size()) << " in " << a.cv.groups.size() << " source groups\n";
  }
}

void print_fit(const core::EfficiencySet& fitted, const core::EfficiencySet& preset,
               double fitted_mape, std::ostream& out) {
  out << "\nEfficiency shares fitted to all rows (preset in brackets), MAPE "
      << fixed(fitted_mape, 2) << " %:\n";
  const auto& params = core::tuned_parameters();
  for (std::size_t i = 0; i < params.size(); ++i) {
    out << "  " << pad(params[i].name, 28) << lpad(fixed(fitted.values[i], 3), 8) << "  ("
        << fixed(preset.values[i], 3) << ")\n";
  }
}

nlohmann::json to_json(const core::ValidationReport& report, const Analysis& a) {
  using nlohmann::json;
  json rows = json::array();
  for (std::size_t i = 0; i < report.rows.size(); ++i) {
    const auto& r = report.rows[i];
    const auto& e = r.estimate;
    json row = {{"row_id", r.run.row_id},
                {"source_group", r.run.source_group},
                {"group", r.run.group},
                {"measured_s", r.run.measured_s},
                {"predicted_s", r.predicted_s},
                {"error_pct", r.error_pct},
                {"device", r.run.device},
                {"plan", r.run.plan.label()},
                {"defaults", r.run.defaults},
                {"breakdown_s",
                 {{"forward", core::ns_to_s(e.forward_ns)},
                  {"backward", core::ns_to_s(e.backward_ns)},
                  {"recompute", core::ns_to_s(e.recompute_ns)},
                  {"tp_comm", core::ns_to_s(e.tp_comm_ns)},
                  {"cp_comm", core::ns_to_s(e.cp_comm_ns)},
                  {"pp_comm", core::ns_to_s(e.pp_comm_ns)},
                  {"bubble", core::ns_to_s(e.bubble_ns)},
                  {"dp_comm_exposed", core::ns_to_s(e.dp_comm_exposed_ns)},
                  {"optimizer", core::ns_to_s(e.optimizer_ns)}}},
                {"mfu", e.mfu},
                {"memory_gib", e.memory.total_bytes() / core::gib(1)}};
    if (a.cross_validated) {
      row["held_out_predicted_s"] = a.cv.predicted_s[i];
      row["held_out_error_pct"] = a.cv.error_pct[i];
    }
    rows.push_back(std::move(row));
  }
  json skipped = json::array();
  for (const auto& s : report.skipped)
    skipped.push_back({{"row_id", s.row_id}, {"reason", s.reason}});
  json groups = json::array();
  const auto by_group = report.by_group();
  for (std::size_t i = 0; i < by_group.size(); ++i) {
    const auto& g = by_group[i];
    json entry = {{"source_group", g.source_group}, {"rows", g.rows}, {"mape_pct", g.mape_pct}};
    if (a.cross_validated) entry["held_out_mape_pct"] = a.cv.groups[i].mape_pct;
    groups.push_back(std::move(entry));
  }
  json ranking = json::array();
  for (const auto& g : a.ranking) {
    ranking.push_back({{"group", g.group},
                       {"plans", g.plans},
                       {"spearman", g.spearman},
                       {"pick_loss_pct", g.pick_loss_pct},
                       {"picked_row", g.picked_row},
                       {"best_row", g.best_row}});
  }
  json out = {{"source", report.source},       {"rows", rows},     {"skipped", skipped},
              {"malformed", report.malformed}, {"groups", groups}, {"ranking", ranking},
              {"mape_pct", report.mape_pct()}};
  if (a.cross_validated) out["held_out_mape_pct"] = a.cv.mape_pct();
  return out;
}

void run_validate(const ValidateOptions& opt, CliContext& ctx) {
  if (!opt.cv.empty() && opt.cv != "group") {
    throw core::InputError("--cv: expected 'group' (leave one source group out), found '" + opt.cv +
                           "'");
  }
  check_output_path("--json", opt.json_path);
  const core::ValidationReport report = core::validate_csv_files(opt.csv_paths);
  std::vector<core::PublishedRun> runs;
  for (const auto& r : report.rows) runs.push_back(r.run);
  const std::vector<std::string> lonely = core::single_row_groups(runs);
  const Analysis analysis = analyse(report, opt.cv == "group");
  print_report(report, analysis, ctx.out);
  if (opt.fit) {
    const core::EfficiencySet fitted = core::fit_efficiencies(runs);
    print_fit(fitted, core::preset_efficiencies(), core::mape_pct(runs, fitted), ctx.out);
  }
  for (const auto& message : report.malformed) ctx.err << "malformed row: " << message << "\n";
  for (const auto& message : lonely) ctx.err << "bad group: " << message << "\n";
  if (!opt.json_path.empty()) {
    std::ofstream file(opt.json_path);
    if (!file) throw core::unwritable_path(opt.json_path);
    file << to_json(report, analysis).dump(2) << "\n";
    if (!file) throw core::InputError(opt.json_path + ": write failed");
  }
  if (!report.malformed.empty() || !lonely.empty()) ctx.status = 2;
}

}  // namespace

void add_validate_command(CLI::App& app, CliContext& ctx) {
  auto* cmd = app.add_subcommand(
      "validate",
      "Predict the published runs of ground-truth CSVs (tests/data/dev.csv's schema) and "
      "report each row's error and the mean absolute percentage error");
  auto opt = std::make_shared<ValidateOptions>();
  cmd->footer(
      "Examples:\n"
      "  parashift validate tests/data/dev.csv\n"
      "  parashift validate tests/data/dev.csv tests/data/published.csv --cv group\n"
      "  parashift validate tests/data/published.csv --fit --json fit.json");
  cmd->add_option("csv", opt->csv_paths, "CSV files of published runs (read as one table)")
      ->required();
  cmd->add_option("--cv", opt->cv,
                  "cross-validate: 'group' fits the efficiency shares without each "
                  "source_group in turn and predicts that group");
  cmd->add_flag("--fit", opt->fit, "print the efficiency shares fitted to all the rows");
  cmd->add_option("--json", opt->json_path,
                  "also write one JSON object per row (and the MAPE) to FILE");
  cmd->callback([&ctx, opt] { run_validate(*opt, ctx); });
}

}  // namespace parashift::tools
