// How a run reports its calibrated cost model (module `calibrate`), the same
// for `simulate` and `run` on every backend: text lines and JSON.
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "core/controller/cost_calibration.hpp"

namespace parashift::core {

/// "calibration         gemm 1.25x +- 0.01, ..." then the predicted and
/// observed iteration time at the first and last iteration and where the
/// prediction came within 5%.
void print_calibration(std::ostream& out, const CalibrationSummary& c);
/// {"factors": {"gemm": {"estimate", "stddev"}, ...}, "settled_within_5pct_at",
///  "iterations": [{"iteration", "observed_s", "predicted_s", "factors": {...}}]}.
nlohmann::json calibration_json(const CalibrationSummary& c);

}  // namespace parashift::core
