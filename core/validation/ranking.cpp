#include "core/validation/ranking.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace parashift::core {

namespace {

std::vector<double> average_ranks(const std::vector<double>& x) {
  std::vector<std::size_t> order(x.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&x](std::size_t a, std::size_t b) { return x[a] < x[b]; });
  std::vector<double> rank(x.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && x[order[j + 1]] == x[order[i]]) ++j;
    const double mean = 0.5 * static_cast<double>(i + j) + 1.0;
    for (std::size_t k = i; k <= j; ++k) rank[order[k]] = mean;
    i = j + 1;
  }
  return rank;
}

double tokens_per_gpu_s(const PublishedRun& r, double seconds) {
  return static_cast<double>(r.plan.global_batch) * r.seq_len / (seconds * r.gpus);
}

std::vector<std::vector<std::size_t>> groups_of(const std::vector<PublishedRun>& runs) {
  std::vector<std::string> names;
  std::vector<std::vector<std::size_t>> members;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].group.empty()) continue;
    const auto at = std::find(names.begin(), names.end(), runs[i].group);
    if (at == names.end()) {
      names.push_back(runs[i].group);
      members.push_back({i});
    } else {
      members[static_cast<std::size_t>(at - names.begin())].push_back(i);
    }
  }
  return members;
}

}  // namespace

double spearman_rho(const std::vector<double>& a, const std::vector<double>& b) {
  const std::vector<double> ra = average_ranks(a);
  const std::vector<double> rb = average_ranks(b);
  const double n = static_cast<double>(ra.size());
  const double mean = (n + 1.0) / 2.0;
  double cov = 0, va = 0, vb = 0;
  for (std::size_t i = 0; i < ra.size(); ++i) {
    cov += (ra[i] - mean) * (rb[i] - mean);
    va += (ra[i] - mean) * (ra[i] - mean);
    vb += (rb[i] - mean) * (rb[i] - mean);
  }
  return va > 0 && vb > 0 ? cov / std::sqrt(va * vb) : 0.0;
}

std::vector<PlanGroupRanking> rank_plan_groups(const std::vector<PublishedRun>& runs,
                                               const std::vector<double>& predicted_s) {
  std::vector<PlanGroupRanking> out;
  for (const auto& members : groups_of(runs)) {
    if (members.size() < 2) continue;
    std::vector<double> measured, predicted;
    for (std::size_t i : members) {
      measured.push_back(tokens_per_gpu_s(runs[i], runs[i].measured_s));
      predicted.push_back(tokens_per_gpu_s(runs[i], predicted_s[i]));
    }
    const auto pick = static_cast<std::size_t>(
        std::max_element(predicted.begin(), predicted.end()) - predicted.begin());
    const auto best = static_cast<std::size_t>(std::max_element(measured.begin(), measured.end()) -
                                               measured.begin());
    PlanGroupRanking g;
    g.group = runs[members.front()].group;
    g.plans = static_cast<int>(members.size());
    g.spearman = spearman_rho(predicted, measured);
    g.pick_loss_pct = 100.0 * (1.0 - measured[pick] / measured[best]);
    g.picked_row = runs[members[pick]].row_id;
    g.best_row = runs[members[best]].row_id;
    out.push_back(g);
  }
  return out;
}

std::vector<std::string> single_row_groups(const std::vector<PublishedRun>& runs) {
  std::vector<std::string> out;
  for (const auto& members : groups_of(runs)) {
    if (members.size() == 1) {
      out.push_back(runs[members.front()].location + ": group '" + runs[members.front()].group +
                    "' has one row; a ranking group needs at least two plans");
    }
  }
  return out;
}

}  // namespace parashift::core
