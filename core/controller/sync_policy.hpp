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
//
// It also re-decides when the network changes under it, without waiting
// for `every`: when the congested links in StepReport::links change (a
// link at most 1 - `threshold` of its healthy rate to another tenant's
// load or a degradation, the aggregation module's edge_share) or the
// calibration detects a step change (its rows, the measured per-group
// communication times, off by 5% and 5 standard deviations), it evaluates
// every iteration for the next `every` iterations, so a change that pays
// for `patience` evaluations is made within `every` iterations of the
// congestion change. Priced on the calibrated model where calibrating (its
// inter-node factor follows the measured sync times); otherwise on the
// presets with the inter-node rate times the share of it the slowest
// data-parallel ring gets on the congested links (slowest_ring_share).
//
// Where the backend measures how much of the real gradients each
// compressor would leave out (StepReport::compression_fits: the executor,
// every `every` iterations), a compressor leaving out more than
// `max_left_out` is not chosen however fast, and one already running that
// comes to leave out more is replaced by the fastest that does not (after
// `patience` evaluations, whatever min_improvement says). The simulator
// has no gradients to measure: there it prices time alone.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/controller/policy_config.hpp"
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
  bool topk = false;        // pays only at small shares and few ranks (docs/compression.md)
  double threshold = 0.25;  // share of a link's healthy rate lost that congests it
  /// The most of the gradient's energy a compressor may leave out
  /// (core/compress/compression_fit.hpp); 1: no limit.
  double max_left_out = 0.5;
};

/// The compressors `options` let the module choose, `none` first.
std::vector<CompressionSpec> sync_compressors(const SyncPolicyOptions& options);
/// The module's options from its knobs (policy.sync.*).
SyncPolicyOptions sync_policy_options(const ModuleConfig& config);

/// One candidate and its predicted iteration time.
struct SyncChoice {
  SyncMode sync = SyncMode::Flat;
  CompressionSpec compression;
  TimeNs iteration_ns = 0;
  std::string label() const;  // "hierarchical + powersgd:16", "flat + none"
};

/// Every candidate `options` allow that the plan admits (plan.problems()
/// empty), the current fields first, priced by the calibrated model when
/// `calibration` is given and by job.cost's presets otherwise, with the
/// presets' inter-node rate times `inter_node_share` (the telemetry's);
/// fastest first, ties in candidate order. Empty without job.cost.
std::vector<SyncChoice> rank_sync_choices(const JobModel& job, const SyncPolicyOptions& options,
                                          const CostCalibration* calibration,
                                          double inter_node_share = 1);

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
  /// Whether the network changed (congested links, a calibration step
  /// change) since the last iteration; records what it saw.
  bool network_moved(const PolicyContext& context);

  std::optional<std::string> streak_label_;  // the best change of the last evaluations
  int streak_ = 0;
  std::set<std::string> congested_;   // links congested at the last iteration
  double ring_share_ = 1;             // the slowest data-parallel ring's share of its rate
  int calibration_changes_ = 0;       // the calibration's step changes seen
  int burst_left_ = 0;                // iterations left that evaluate every iteration
  std::string last_rejected_;         // the last rejection logged
  std::string last_dropped_;          // the last too-lossy candidate logged
  std::vector<CompressionFit> fits_;  // the last measured, if any
  /// The measured share `c` leaves out, when measured and over max_left_out.
  std::optional<double> too_lossy(const CompressionSpec& c) const;
};

}  // namespace parashift::core
