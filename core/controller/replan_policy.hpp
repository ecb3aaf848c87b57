// The `replan` policy module: re-plans the whole parallel layout (tp, pp,
// dp, cp, interleaving, micro-batch, recompute, sharding) while the job
// runs, from the calibrated cost model (module `calibrate`).
//
// It searches only when the state has changed: the calibration detected a
// step change of the cluster since the last search (a row off by more than
// 5% and 5 standard deviations of its noise), or its prediction of the
// running plan has drifted by more than `trigger` of itself since the last
// search (or, before the first one, from the preset's prediction the plan
// was chosen by). A degraded network or slower kernels than the datasheet
// show up there; noise does not, so a healthy job is not searched, let
// alone switched.
//
// A search is the planner's (core/planner/planner.hpp) over every valid
// plan that fits in memory, on the calibrated device and cluster, with the
// ranks the calibration measures slow as slow GPUs (each plan, the running
// one included, estimated with micro-batches balanced by replica speed,
// core/cost/speed_balance.hpp; a slow GPU that paces a plan shows up as a
// drift of the running plan's prediction). Its best
// plan is taken only when
//   - it saves at least `min_improvement` of the running plan's predicted
//     iteration, and at least `sigmas` standard deviations of that saving
//     under the calibration's posterior (a saving that rests on factors
//     the measurements have not pinned down is no saving);
//   - its gain over the remaining run is at least `gain_ratio` times the
//     switch cost (core/cost/replan_cost.hpp: the re-sharded state over the
//     calibrated inter-node rate and `rebuild_s` for the communicators), and
//     exceeds it by `min_gain_s`: the prediction of a plan not yet run can
//     be off beyond what the calibration's spread says (its groups'
//     communication was never measured), so a switch must pay for itself
//     with margin;
//   - it has won `patience` searches in a row, `every` iterations apart
//     (hysteresis: a transient dip does not move the job).
// After a switch the new plan's prediction is the reference, so the module
// acts again only on a further change. It never oscillates: going back
// needs the old plan to save `min_improvement` over the new one under the
// same model, which contradicts the switch unless the cluster changed again.
// It acts only on a backend that re-plans live (Capabilities::live_replan).
//
// The switch's fixed part (`rebuild_s`: communicators rebuilt, buffers set
// up) is learnt from the switches the backend reports (StepReport::applied):
// each re-plan that re-shards, the module's or a scheduled one, gives one
// sample, its measured time less the predicted fetch of the state; once
// there is one, the mean of the samples replaces the option, and the log
// says so.
//
// A search's own time is counted, not measured, so runs stay
// byte-identical: plans estimated x `plan_cost_us`. One that takes more
// than `background_share` of the running iteration runs in the background:
// its result (the search as of the iteration it started) is weighed at the
// first iteration after it is ready, ceil(search / iteration) later, and
// dropped if the plan changed meanwhile; no other search starts before.
#pragma once

#include <optional>
#include <string>

#include "core/controller/policy_module.hpp"
#include "core/cost/replan_cost.hpp"
#include "core/planner/planner.hpp"

namespace parashift::core {

struct ReplanPolicyOptions {
  double trigger = 0.10;          // share the running plan's prediction must drift
  double sigmas = 2;              // standard deviations the saving must exceed
  double min_improvement = 0.05;  // share of the iteration the new plan must save
  double min_gain_s = 0;          // least gain over the remaining run, net of the switch cost
  double gain_ratio = 2;          // gain over the remaining run / switch cost, at least
  int warmup = 3;                 // iterations observed since the last change before a search
  int every = 5;                  // iterations between the searches that confirm a change
  int patience = 2;               // searches in a row the same plan must win
  double rebuild_s = 20;          // communicator rebuild the module expects, s
  double plan_cost_us = 0.35;     // counted time to estimate one plan (BM_ReplanSearch16k)
  double background_share = 0.1;  // a search longer than this share of an iteration: background
};

class ReplanPolicy : public PolicyModule {
 public:
  explicit ReplanPolicy(ReplanPolicyOptions options) : options_(options) {}
  void run(PolicyContext& context) override;

 private:
  // A search running in the background: its result, the iteration it is
  // ready at, and the plan it was searched for.
  struct Pending {
    PlanSearch found;
    std::int64_t ready = 0;
    std::string plan_label;
  };
  // Learns the switch's fixed part from a re-plan reported applied since
  // the previous iteration (`previous_plan_` -> the job's plan).
  void learn_switch(PolicyContext& context);
  // The switch's fixed part the module expects now, s.
  double rebuild_s() const;
  // Weighs a search's best plan against the running one; may switch.
  void decide(PolicyContext& context, const PlanSearch& found, TimeNs now_ns,
              const DeviceSpec& device, const ClusterView& cluster);

  ReplanPolicyOptions options_;
  std::optional<Pending> pending_;
  std::optional<TimeNs> reference_ns_;  // the running plan's prediction at the last search
  TimeNs chosen_ns_ = 0;                // ... when it was chosen (for the log)
  std::string reference_label_;         // the plan the reference is of
  std::string streak_label_;            // the plan that won the last searches
  int streak_ = 0;
  std::int64_t last_search_ = -1;
  int changes_seen_ = 0;                       // the calibration's step changes at the last search
  std::string rejected_;                       // the last rejection logged (plan and reason)
  std::optional<ParallelPlan> previous_plan_;  // the plan of the previous iteration
  double measured_rebuild_sum_s_ = 0;          // the switches' fixed parts measured
  int switches_measured_ = 0;
};

/// The switch cost of `from` -> `to` as the policy sees it: the state
/// fetched at the cluster's inter-node rate per GPU, plus `rebuild_ns`.
ReplanCost predicted_replan_cost(const CostInputs& inputs, const ParallelPlan& from,
                                 const ParallelPlan& to, TimeNs rebuild_ns);

}  // namespace parashift::core
