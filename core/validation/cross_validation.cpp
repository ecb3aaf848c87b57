#include "core/validation/cross_validation.hpp"

#include <cmath>

#include "core/validation/validation_report.hpp"

namespace parashift::core {

double CrossValidation::mape_pct() const {
  if (error_pct.empty()) return 0.0;
  double sum = 0;
  for (double e : error_pct) sum += std::fabs(e);
  return sum / static_cast<double>(error_pct.size());
}

CrossValidation leave_one_group_out(const std::vector<PublishedRun>& runs) {
  CrossValidation cv;
  cv.predicted_s.assign(runs.size(), 0.0);
  cv.error_pct.assign(runs.size(), 0.0);
  std::vector<std::string> names;
  for (const auto& r : runs) {
    bool seen = false;
    for (const auto& n : names) seen = seen || n == r.source_group;
    if (!seen) names.push_back(r.source_group);
  }
  for (const auto& name : names) {
    std::vector<PublishedRun> train;
    for (const auto& r : runs) {
      if (r.source_group != name) train.push_back(r);
    }
    HeldOutGroup g;
    g.source_group = name;
    g.fitted = fit_efficiencies(train);
    double sum = 0;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      if (runs[i].source_group != name) continue;
      const RowPrediction p = predict_run(runs[i], g.fitted.device(runs[i].device));
      cv.predicted_s[i] = p.predicted_s;
      cv.error_pct[i] = p.error_pct;
      sum += std::fabs(p.error_pct);
      ++g.rows;
    }
    g.mape_pct = sum / g.rows;
    cv.groups.push_back(std::move(g));
  }
  return cv;
}

}  // namespace parashift::core
