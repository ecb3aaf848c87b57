// `parashift validate <csv> [--json FILE]`: predicts every published run of
// a ground-truth CSV with the cost model and reports the error per row, per
// source group and overall (mean absolute percentage error).
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "core/input_error.hpp"
#include "core/validation/validation_report.hpp"
#include "tools/cli/command.hpp"

namespace parashift::tools {

namespace {

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

void print_report(const core::ValidationReport& report, std::ostream& out) {
  out << pad("row_id", 16) << lpad("measured_s", 11) << lpad("predicted_s", 12)
      << lpad("error_%", 9) << "  defaults applied\n";
  for (const auto& r : report.rows) {
    out << pad(r.run.row_id, 16) << lpad(fixed(r.run.measured_s, 3), 11)
        << lpad(fixed(r.predicted_s, 3), 12) << lpad(fixed(r.error_pct, 1), 9) << "  "
        << joined(r.run.defaults) << "\n";
  }
  for (const auto& s : report.skipped) out << "skipped " << s.reason << "\n";
  out << "\nMAPE by source group:\n";
  for (const auto& g : report.by_group()) {
    out << "  " << pad(g.source_group, 52) << lpad(std::to_string(g.rows), 3) << " rows "
        << lpad(fixed(g.mape_pct, 2), 6) << " %\n";
  }
  out << "MAPE " << fixed(report.mape_pct(), 2) << " % over " << report.rows.size() << " rows ("
      << report.skipped.size() << " skipped, " << report.malformed.size() << " malformed)\n";
}

nlohmann::json to_json(const core::ValidationReport& report) {
  using nlohmann::json;
  json rows = json::array();
  for (const auto& r : report.rows) {
    const auto& e = r.estimate;
    rows.push_back({{"row_id", r.run.row_id},
                    {"source_group", r.run.source_group},
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
                    {"memory_gib", e.memory.total_bytes() / core::gib(1)}});
  }
  json skipped = json::array();
  for (const auto& s : report.skipped)
    skipped.push_back({{"row_id", s.row_id}, {"reason", s.reason}});
  json groups = json::array();
  for (const auto& g : report.by_group()) {
    groups.push_back(
        {{"source_group", g.source_group}, {"rows", g.rows}, {"mape_pct", g.mape_pct}});
  }
  return {{"source", report.source},       {"rows", rows},     {"skipped", skipped},
          {"malformed", report.malformed}, {"groups", groups}, {"mape_pct", report.mape_pct()}};
}

void run_validate(const std::string& csv_path, const std::string& json_path, CliContext& ctx) {
  const core::ValidationReport report = core::validate_csv_file(csv_path);
  print_report(report, ctx.out);
  for (const auto& message : report.malformed) ctx.err << "malformed row: " << message << "\n";
  if (!json_path.empty()) {
    std::ofstream file(json_path);
    if (!file) throw core::unwritable_path(json_path);
    file << to_json(report).dump(2) << "\n";
    if (!file) throw core::InputError(json_path + ": write failed");
  }
  if (!report.malformed.empty()) ctx.status = 2;
}

}  // namespace

void add_validate_command(CLI::App& app, CliContext& ctx) {
  auto* cmd = app.add_subcommand(
      "validate",
      "Predict the published runs of a ground-truth CSV (tests/data/dev.csv's schema) and "
      "report each row's error and the mean absolute percentage error");
  auto csv_path = std::make_shared<std::string>();
  auto json_path = std::make_shared<std::string>();
  cmd->add_option("csv", *csv_path, "CSV of published runs")->required();
  cmd->add_option("--json", *json_path,
                  "also write one JSON object per row (and the MAPE) to FILE");
  cmd->callback([&ctx, csv_path, json_path] { run_validate(*csv_path, *json_path, ctx); });
}

}  // namespace parashift::tools
