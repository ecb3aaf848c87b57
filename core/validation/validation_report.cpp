#include "core/validation/validation_report.hpp"

#include <cmath>

namespace parashift::core {

double ValidationReport::mape_pct() const {
  if (rows.empty()) return 0.0;
  double sum = 0;
  for (const auto& r : rows) sum += std::fabs(r.error_pct);
  return sum / static_cast<double>(rows.size());
}

std::vector<GroupError> ValidationReport::by_group() const {
  std::vector<GroupError> groups;
  for (const auto& r : rows) {
    GroupError* group = nullptr;
    for (auto& g : groups) {
      if (g.source_group == r.run.source_group) group = &g;
    }
    if (!group) {
      groups.push_back(GroupError{r.run.source_group, 0, 0.0});
      group = &groups.back();
    }
    group->rows += 1;
    group->mape_pct += std::fabs(r.error_pct);
  }
  for (auto& g : groups) g.mape_pct /= g.rows;
  return groups;
}

RowPrediction predict_run(const PublishedRun& run) {
  return predict_run(run, device_preset(run.device));
}

RowPrediction predict_run(const PublishedRun& run, const DeviceSpec& device) {
  const ClusterView cluster =
      published_cluster(device, run.gpus, run.gpus_per_node, run.node_network_Bps);
  RowPrediction out;
  out.run = run;
  out.estimate = estimate_iteration(run.model, device, cluster, run.plan, run.seq_len, run.options);
  out.predicted_s = ns_to_s(out.estimate.total_ns);
  out.error_pct = (out.predicted_s - run.measured_s) / run.measured_s * 100.0;
  return out;
}

ValidationReport validate_csv_table(const CsvTable& table, const std::string& source) {
  ValidationReport report;
  report.source = source;
  const ColumnIndex columns(table.header, source);
  for (const auto& record : table.records) {
    RowReading reading = read_published_run(columns, record, source);
    switch (reading.status) {
      case RowStatus::Ok:
        report.rows.push_back(predict_run(reading.run));
        break;
      case RowStatus::Unrecognised:
        report.skipped.push_back(SkippedRow{reading.run.row_id, reading.reason});
        break;
      case RowStatus::Malformed:
        report.malformed.push_back(reading.reason);
        break;
    }
  }
  return report;
}

ValidationReport validate_csv_file(const std::string& path) {
  return validate_csv_table(read_csv_file(path), path);
}

ValidationReport validate_csv_files(const std::vector<std::string>& paths) {
  ValidationReport all;
  for (const auto& path : paths) {
    ValidationReport one = validate_csv_file(path);
    all.source += (all.source.empty() ? "" : " + ") + one.source;
    for (auto& r : one.rows) all.rows.push_back(std::move(r));
    for (auto& s : one.skipped) all.skipped.push_back(std::move(s));
    for (auto& m : one.malformed) all.malformed.push_back(std::move(m));
  }
  return all;
}

}  // namespace parashift::core
