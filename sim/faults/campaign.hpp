// A fault-injection campaign: the same failures (per seed) played against
// each policy, then summarised with percentiles.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/snapshot/ettr_model.hpp"
#include "sim/faults/campaign_setup.hpp"
#include "sim/faults/policy_run.hpp"

namespace parashift::sim {

struct CampaignOptions {
  int seeds = 100;
  double days = 30;
  /// Replayed instead of random draws when set (every seed sees the same).
  std::optional<std::vector<FailureEvent>> trace;
  /// Called after each seed with (done, total).
  std::function<void(int, int)> progress;
};

struct Percentiles {
  double mean = 0, min = 0, p1 = 0, p10 = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
};
/// Nearest-rank percentiles (p-th: the ceil(p/100 * n)-th smallest); zeros when empty.
Percentiles percentiles(std::vector<double> values);

struct PolicySummary {
  std::string name;
  Percentiles ettr;              // per seed
  Percentiles lost_work_s;       // per interruption
  double lost_work_bound_s = 0;  // largest bound asserted (PolicyRun::lost_work_bound_s)
  Percentiles recovery_s;        // per interruption
  Percentiles overhead;          // per seed: stall / training time
  long long interruptions = 0;
  long long planned = 0;  // of them, planned maintenance
  long long state_losses = 0;
  long long shrinks = 0;
  long long regrows = 0;
  long long migrations = 0;  // ranks moved off fail-slow GPUs
  Percentiles slow_lost;     // per seed: work lost to fail-slow episodes / wall time
  std::vector<std::string> notes;
};

struct CampaignResult {
  int seeds = 0;
  double days = 0;
  long long failures = 0;
  long long planned = 0;        // planned maintenance events
  long long slow_episodes = 0;  // fail-slow episodes
  PolicySummary snapshot;
  PolicySummary baseline;
};

CampaignResult run_campaign(CampaignSetup& setup, const CampaignOptions& options);

/// The baseline's inputs to the closed-form ETTR models
/// (core/snapshot/ettr_model.hpp): its unplanned interruptions per second as
/// the campaign drew them, its checkpoint interval and write, its restart.
core::CheckpointRestart baseline_model_inputs(const CampaignSetup& setup, const CampaignResult& r);

nlohmann::json to_json(const CampaignSetup& setup, const CampaignResult& result);
void print_campaign(std::ostream& out, const CampaignSetup& setup, const CampaignResult& result);

}  // namespace parashift::sim
