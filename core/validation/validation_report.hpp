// Predicts every published run of a CSV file with the cost model and
// compares with the measured iteration time.
#pragma once

#include <string>
#include <vector>

#include "core/cost/estimate.hpp"
#include "core/validation/published_run.hpp"

namespace parashift::core {

struct RowPrediction {
  PublishedRun run;
  double predicted_s = 0;
  double error_pct = 0;  // (predicted - measured) / measured x 100
  IterationEstimate estimate;
};

struct SkippedRow {
  std::string row_id;
  std::string reason;
};

struct GroupError {
  std::string source_group;
  int rows = 0;
  double mape_pct = 0;
};

struct ValidationReport {
  std::string source;
  std::vector<RowPrediction> rows;
  std::vector<SkippedRow> skipped;           // unrecognised device or setting
  std::vector<std::string> malformed;        // bad numbers, wrong column counts
  double mape_pct() const;                   // over `rows`; 0 when empty
  std::vector<GroupError> by_group() const;  // in first-seen order
};

/// Predicts one run (the device preset, the published cluster, the run's options).
RowPrediction predict_run(const PublishedRun& run);
/// The same on a given device (to study the efficiency parameters).
RowPrediction predict_run(const PublishedRun& run, const DeviceSpec& device);

/// Reads `path` (throws InputError when it cannot be opened or its header
/// lacks a required column) and predicts every row it can.
ValidationReport validate_csv_file(const std::string& path);
ValidationReport validate_csv_table(const CsvTable& table, const std::string& source);
/// Several files as one table (each with its own header); `source` joins their names.
ValidationReport validate_csv_files(const std::vector<std::string>& paths);

}  // namespace parashift::core
