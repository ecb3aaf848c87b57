// The `sync` policy module: picks the plan's data-parallel sync mode and
// gradient compressor (core/cost/grad_sync.hpp) from the cost model of the
// job as it runs: the calibrated model when `calibrate` is on (the link
// rates it has measured), the presets otherwise. Every `every` iterations it
// prices each candidate (flat or hierarchical x none, int8, powersgd at
// ranks 4, 16, 64, and top-k at 1%, each as its knobs allow and the plan
// admits) and re-plans to the fastest when it saves at least
// min_improvement of the iteration and has been the best for `patience`
// evaluations in a row. It acts only on the replicated optimizer with
// dp > 1 (the only plans the fields apply to), logs the fastest rejected
// candidate once per evaluation that finds one, and never switches back
// for a smaller gain than it switched for (the same threshold both ways).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/controller/policy_module.hpp"

namespace parashift::core {

struct SyncPolicyOptions {
  double min_improvement = 0.02;  // share of the iteration a change must save
  int every = 10;                 // iterations between evaluations
  int patience = 2;               // evaluations in a row a change must be the best
  bool hierarchical = true;       // may choose sync: hierarchical
  bool delayed = false;  // may choose sync: delayed (one iteration stale: a training choice)
  bool int8 = true;
  bool powersgd = true;
  bool topk = false;  // pays only at small shares and few ranks (docs/compression.md)
};

/// One candidate and its predicted iteration time.
struct SyncChoice {
  SyncMode sync = SyncMode::Flat;
  CompressionSpec compression;
  TimeNs iteration_ns = 0;
  std::string label() const;  // "hierarchical + powersgd:16", "flat + none"
};

/// Every candidate `options` allow that the plan admits (plan.problems()
/// empty), the current fields first, priced by the calibrated model when
/// `calibration` is given and by job.cost's presets otherwise; fastest
/// first, ties in candidate order. Empty without job.cost.
std::vector<SyncChoice> rank_sync_choices(const JobModel& job, const SyncPolicyOptions& options,
                                          const CostCalibration* calibration);

/// What the module moves to from `ranked` (rank_sync_choices) when the plan
/// runs `current` (one of them): the fastest when it saves at least
/// `min_improvement` of current's time, else current.
const SyncChoice& sync_pick(const std::vector<SyncChoice>& ranked, const SyncChoice& current,
                            double min_improvement);

class SyncPolicy : public PolicyModule {
 public:
  explicit SyncPolicy(SyncPolicyOptions options) : options_(options) {}
  void run(PolicyContext& context) override;

 private:
  SyncPolicyOptions options_;
  std::optional<std::string> streak_label_;  // the best change of the last evaluations
  int streak_ = 0;
};

}  // namespace parashift::core
