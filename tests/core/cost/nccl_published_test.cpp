// The NCCL model against published nccl-tests measurements
// (tests/data/collectives/, one CSV per source; docs/collectives.md has the
// table this prints and the goals). No parameter is fitted to these rows:
// the fabric's parameters come from the statements cited in nccl_model.hpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/cost/estimate.hpp"
#include "core/device_spec.hpp"
#include "core/scenario/cluster_view.hpp"
#include "core/validation/csv_reader.hpp"

using namespace parashift::core;

namespace {

const std::string kDir = std::string(PARASHIFT_SOURCE_DIR) + "/tests/data/collectives";

struct Row {
  std::string file;
  int line = 0;
  std::string device;
  int nodes = 0;
  int gpus_per_node = 0;
  int nics_per_node = 0;
  CollectiveKind kind = CollectiveKind::AllReduce;
  double bytes = 0;
  double busbw_GBps = 0;
  double time_us = -1;  // -1: not published
};

std::vector<Row> read_rows() {
  std::vector<Row> rows;
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(kDir)) {
    if (e.path().extension() == ".csv") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  for (const auto& path : files) {
    const CsvTable t = read_csv_file(path);
    auto col = [&t](const char* name) {
      const auto it = std::find(t.header.begin(), t.header.end(), name);
      REQUIRE(it != t.header.end());
      return static_cast<std::size_t>(it - t.header.begin());
    };
    for (const CsvRecord& r : t.records) {
      Row row;
      row.file = std::filesystem::path(path).filename().string();
      row.line = r.line;
      row.device = r.fields.at(col("device"));
      row.nodes = std::stoi(r.fields.at(col("nodes")));
      row.gpus_per_node = std::stoi(r.fields.at(col("gpus_per_node")));
      row.nics_per_node = std::stoi(r.fields.at(col("nics_per_node")));
      const std::string op = r.fields.at(col("op"));
      row.kind = op == "all_gather"       ? CollectiveKind::AllGather
                 : op == "reduce_scatter" ? CollectiveKind::ReduceScatter
                                          : CollectiveKind::AllReduce;
      row.bytes = std::stod(r.fields.at(col("bytes")));
      row.busbw_GBps = std::stod(r.fields.at(col("busbw_GBps")));
      const std::string time = r.fields.at(col("time_us"));
      if (!time.empty()) row.time_us = std::stod(time);
      rows.push_back(row);
    }
  }
  return rows;
}

struct Predicted {
  double time_us = 0;
  double busbw_GBps = 0;
};

Predicted predict(const Row& row) {
  const int ranks = row.nodes * row.gpus_per_node;
  ClusterView c = cluster_view_of(device_preset(row.device), ranks, row.gpus_per_node);
  c.nccl.nics_per_node = row.nics_per_node;
  const NcclTime t =
      nccl_collective(c.nccl, row.kind, row.bytes, group_links(c, ranks, row.gpus_per_node));
  Predicted p;
  p.time_us = static_cast<double>(t.time_ns) * 1e-3;
  p.busbw_GBps = row.bytes / (p.time_us * 1e-6) * nccl_bus_factor(row.kind, ranks) / 1e9;
  return p;
}

// Relative error of the time where the source gives it (latency-bound
// rows), else of the bus bandwidth.
double time_error(const Row& row, const Predicted& p) {
  return p.time_us / row.time_us - 1.0;
}
double busbw_error(const Row& row, const Predicted& p) {
  return p.busbw_GBps / row.busbw_GBps - 1.0;
}

constexpr double kMiB = 1024.0 * 1024.0;

}  // namespace

TEST_CASE("published nccl-tests rows: every source is read and predicted") {
  const auto rows = read_rows();
  // 32 + 1 + 3 + 3 rows in the four files.
  CHECK(rows.size() == 39);
  std::map<std::string, double> worst;
  for (const Row& row : rows) {
    const Predicted p = predict(row);
    const bool latency_bound = row.bytes < 64 * 1024;
    const double e = latency_bound && row.time_us > 0 ? time_error(row, p) : busbw_error(row, p);
    MESSAGE(row.file, ":", row.line, " nodes=", row.nodes, " bytes=", row.bytes,
            " measured busbw=", row.busbw_GBps, " time=", row.time_us,
            " model busbw=", p.busbw_GBps, " time=", p.time_us, " error=", e);
    worst[row.file] = std::max(worst[row.file], std::abs(e));
  }
  for (const auto& [file, e] : worst) MESSAGE(file, ": worst |error| ", e);
}

// One H100 node from 2 to 16 MiB: the 10% goal is not met there
// (docs/collectives.md).
static bool one_node_miss(const Row& row) {
  return row.nodes == 1 && row.bytes >= 2 * kMiB && row.bytes <= 16 * kMiB;
}

TEST_CASE("published nccl-tests rows: bandwidth-bound sizes meet the goals") {
  // Goals (issue #14): busbw within 10% from 1 MiB to 8 GiB on one node,
  // within 15% on 2-64 nodes. Every such row but the one-node 2-16 MiB ones.
  for (const Row& row : read_rows()) {
    if (row.bytes < 1 * kMiB || row.bytes > 8192 * kMiB || one_node_miss(row)) continue;
    const double e = busbw_error(row, predict(row));
    INFO(row.file, ":", row.line, " bytes ", row.bytes, " error ", e);
    CHECK(std::abs(e) <= (row.nodes == 1 ? 0.10 : 0.15));
  }
}

TEST_CASE("published nccl-tests rows: 2-16 MiB on one H100 node (goal not met)") {
  // NVLS's line, 25 us + bytes / (274.5 GB/s x NCCL's medium-size share),
  // is still too fast there: the measured busbw climbs from 87 GB/s at
  // 2 MiB to 237 at 16 MiB, the model's from 97 to 261 (8 MiB: 232
  // against 177, +31%). This bounds the miss so that it cannot grow
  // unnoticed; it was up to +49% before NCCL's medium-size share.
  int rows = 0;
  for (const Row& row : read_rows()) {
    if (!one_node_miss(row)) continue;
    ++rows;
    const double e = busbw_error(row, predict(row));
    INFO(row.file, ":", row.line, " bytes ", row.bytes, " error ", e);
    CHECK(e > -0.10);
    CHECK(e < 0.35);
  }
  CHECK(rows == 4);  // 2, 4, 8 and 16 MiB
}

TEST_CASE("published nccl-tests rows: latency-bound sizes within 30%") {
  // Sizes under 64 KiB, where the source gives the time. The median error
  // must be within 30%; single rows can be outliers of the measurement
  // itself (32 B at 68 us beside 13 us at 16 B and 64 B).
  std::vector<double> errors;
  for (const Row& row : read_rows()) {
    if (row.bytes >= 64 * 1024 || row.time_us <= 0) continue;
    errors.push_back(std::abs(time_error(row, predict(row))));
  }
  REQUIRE(errors.size() >= 10);
  std::sort(errors.begin(), errors.end());
  const double median = errors[errors.size() / 2];
  MESSAGE("latency-bound rows: ", errors.size(), ", median |time error| ", median);
  CHECK(median <= 0.30);
}
