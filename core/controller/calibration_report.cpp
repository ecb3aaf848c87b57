#include "core/controller/calibration_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/controller/lower_median.hpp"

namespace parashift::core {

namespace {

constexpr double kSettledShare = 0.05;

std::string fmt(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

std::string point(const CalibrationSample& s) {
  const double observed = ns_to_s(s.observed_ns), predicted = ns_to_s(s.predicted_ns);
  return "iteration " + std::to_string(s.iteration) + " predicted " + fmt("%.4f", predicted) +
         " s, observed " + fmt("%.4f", observed) + " s (" +
         fmt("%+.1f", observed > 0 ? 100.0 * (predicted - observed) / observed : 0.0) + "%)";
}

nlohmann::json factors_json(const std::array<double, kCostFactors>& f) {
  nlohmann::json j = nlohmann::json::object();
  for (int k = 0; k < kCostFactors; ++k)
    j[to_string(static_cast<CostFactor>(k))] = f[static_cast<std::size_t>(k)];
  return j;
}

}  // namespace

void print_calibration(std::ostream& out, const CalibrationSummary& c) {
  out << "calibration         time factors on the preset (1 = right):";
  for (int k = 0; k < kCostFactors; ++k) {
    const auto i = static_cast<std::size_t>(k);
    out << (k ? "," : "") << " " << to_string(static_cast<CostFactor>(k)) << " "
        << fmt("%.3f", c.factor[i]) << " +- " << fmt("%.3f", c.stddev[i]);
  }
  out << "\n";
  if (c.history.empty()) return;
  out << "  first: " << point(c.history.front()) << "\n";
  out << "  last:  " << point(c.history.back()) << "\n";
  const std::int64_t settled = c.settled_at(kSettledShare);
  if (settled >= 0) {
    out << "  within 5% from iteration " << settled << " on\n";
  } else {
    out << "  not within 5% by the last iteration\n";
  }
  // On a machine whose iterations vary, one late miss resets the line
  // above: the typical error after the first prediction says more.
  if (c.history.size() < 3) return;
  std::vector<double> errors;
  int within = 0;
  for (std::size_t i = 1; i < c.history.size(); ++i) {
    const CalibrationSample& s = c.history[i];
    const double e = std::abs(static_cast<double>(s.predicted_ns - s.observed_ns)) /
                     std::max(1.0, static_cast<double>(s.observed_ns));
    errors.push_back(e);
    within += e <= kSettledShare ? 1 : 0;
  }
  const std::size_t n = errors.size();
  out << "  after iteration " << c.history.front().iteration << ": median |error| "
      << fmt("%.1f", 100.0 * lower_median(errors)) << "%, within 5% in " << within << " of " << n
      << "\n";
}

nlohmann::json calibration_json(const CalibrationSummary& c) {
  nlohmann::json factors = nlohmann::json::object();
  for (int k = 0; k < kCostFactors; ++k) {
    const auto i = static_cast<std::size_t>(k);
    factors[to_string(static_cast<CostFactor>(k))] = {{"estimate", c.factor[i]},
                                                      {"stddev", c.stddev[i]}};
  }
  nlohmann::json iterations = nlohmann::json::array();
  for (const CalibrationSample& s : c.history) {
    iterations.push_back({{"iteration", s.iteration},
                          {"observed_s", ns_to_s(s.observed_ns)},
                          {"predicted_s", ns_to_s(s.predicted_ns)},
                          {"factors", factors_json(s.factor)}});
  }
  const std::int64_t settled = c.settled_at(kSettledShare);
  return {{"factors", factors},
          {"settled_within_5pct_at", settled >= 0 ? nlohmann::json(settled) : nlohmann::json()},
          {"iterations", iterations}};
}

// The calibration's state as a summary (CostCalibration::summary) and its names.

const char* to_string(CostFactor factor) {
  switch (factor) {
    case CostFactor::Gemm:
      return "gemm";
    case CostFactor::Attention:
      return "attention";
    case CostFactor::Memory:
      return "memory";
    case CostFactor::IntraNode:
      return "intra_node";
    case CostFactor::InterNode:
      return "inter_node";
  }
  return "?";
}

CalibrationSummary CostCalibration::summary() const {
  CalibrationSummary out;
  for (int k = 0; k < kCostFactors; ++k) {
    out.factor[static_cast<std::size_t>(k)] = theta_(k);
    out.stddev[static_cast<std::size_t>(k)] = stddev(static_cast<CostFactor>(k));
  }
  out.history = history_;
  return out;
}

std::int64_t CalibrationSummary::settled_at(double share) const {
  std::int64_t since = -1;
  for (const CalibrationSample& s : history) {
    const double error = std::abs(static_cast<double>(s.predicted_ns - s.observed_ns)) /
                         std::max<double>(1.0, static_cast<double>(s.observed_ns));
    if (error > share) {
      since = -1;
    } else if (since < 0) {
      since = s.iteration;
    }
  }
  return since;
}

}  // namespace parashift::core
