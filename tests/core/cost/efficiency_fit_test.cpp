#include <doctest/doctest.h>

#include <cmath>

#include "core/validation/cross_validation.hpp"
#include "core/validation/validation_report.hpp"

using namespace parashift::core;

namespace {

// dev.csv's configurations with their measured times replaced by what the
// model predicts under a known set of shares: a fit that works must find
// shares that reproduce them, and cross-validation must predict each
// source group from the others nearly exactly (every generation appears in
// several groups except the 500 W part, whose clock then falls back to its prior).
std::vector<PublishedRun> synthetic(const EfficiencySet& truth) {
  std::vector<PublishedRun> runs;
  for (const auto& r : validate_csv_file(PARASHIFT_TEST_DATA_DIR "/dev.csv").rows) {
    PublishedRun run = r.run;
    run.measured_s = predict_run(run, truth.device(run.device)).predicted_s;
    runs.push_back(run);
  }
  return runs;
}

}  // namespace

TEST_CASE("the efficiency fit recovers shares that generated the data") {
  EfficiencySet truth = prior_efficiencies();
  const auto& params = tuned_parameters();
  // A truth away from the priors, on the grid: each share 0.1 below its midpoint
  // (half-dim: 128 below) and the 500 W clock at 0.75.
  for (std::size_t i = 0; i < params.size(); ++i) {
    truth.values[i] = params[i].prior() - (params[i].step >= 1.0 ? 128.0 : 0.1);
  }
  truth.values.back() = 0.75;
  const std::vector<PublishedRun> runs = synthetic(truth);
  CHECK(mape_pct(runs, prior_efficiencies()) > 5.0);  // the priors are off ...
  const EfficiencySet fitted = fit_efficiencies(runs);
  // ... the fit is not: within 1%, a fifth of the priors' error at least
  // (the grid's steps leave about 0.5%).
  CHECK(mape_pct(runs, fitted) < 1.0);
}

TEST_CASE("leave-one-group-out predicts each held-out group from the others") {
  EfficiencySet truth = preset_efficiencies();
  const std::vector<PublishedRun> runs = synthetic(truth);
  const CrossValidation cv = leave_one_group_out(runs);
  REQUIRE(cv.groups.size() == 6);
  REQUIRE(cv.error_pct.size() == runs.size());
  for (const auto& g : cv.groups) {
    INFO(g.source_group);
    // The torchtitan rows alone run on the 500 W part: held out, its clock is
    // the prior 0.80 instead of the preset's 0.75, about 6 % off in compute.
    CHECK(g.mape_pct < (g.source_group.find("torchtitan") != std::string::npos ? 10.0 : 2.0));
  }
}
