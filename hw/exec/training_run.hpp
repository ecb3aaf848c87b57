// A training job on the hw executor from start to end: optionally restore the
// newest snapshot every rank can reach, then run iterations, taking snapshots
// every k iterations and applying scheduled repartitions. What `parashift run
// --backend hw` does on each rank.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "core/backend.hpp"
#include "core/scenario/scenario.hpp"
#include "hw/exec/hw_backend.hpp"

namespace parashift::hw {

struct ScheduledRepartition {
  int before_iteration = 0;
  std::vector<int> layers_per_stage;
};

/// Fault injection: rank `rank` sends itself SIGKILL before iteration `iteration`.
struct KillInjection {
  int rank = 0;
  int iteration = 0;
};

struct TrainingRunConfig {
  int iterations = 1;  // the job ends after this many iterations in total
  HwOptions options;
  int snapshot_every = 0;       // 0: no snapshots; else before iteration k, 2k, ... (version = k)
  bool restore = false;         // start from the newest restorable snapshot, if any
  bool keep_snapshots = false;  // leave the job's shards in shared memory at the end
  std::vector<ScheduledRepartition> repartitions;
  std::optional<KillInjection> kill;
};

struct IterationRecord {
  double loss = 0;
  core::StepReport report;
};

struct TrainingRunResult {
  std::vector<IterationRecord> iterations;
  std::optional<RestoreStats> restored;  // when a snapshot was restored
  std::vector<long long> snapshots;      // versions written
  std::vector<int> final_layers_per_stage;
};

/// Collective over `world`. `on_iteration` (may be empty) is called on every
/// rank after each iteration.
TrainingRunResult run_training(const core::Scenario& scenario, const TrainingRunConfig& config,
                               Communicator& world,
                               const std::function<void(const IterationRecord&)>& on_iteration);

}  // namespace parashift::hw
