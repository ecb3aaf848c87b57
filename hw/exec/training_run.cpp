#include "hw/exec/training_run.hpp"

#include <csignal>

#include <unistd.h>

namespace parashift::hw {

TrainingRunResult run_training(const core::Scenario& scenario, const TrainingRunConfig& config,
                               Communicator& world,
                               const std::function<void(const IterationRecord&)>& on_iteration) {
  HwBackend backend(scenario.model, scenario.training.seq_len, scenario.run.seed, scenario.plan,
                    config.options, world);
  TrainingRunResult result;
  if (config.restore) {
    if (const auto version = backend.newest_restorable_snapshot()) {
      backend.apply({core::RestoreDirective{*version}, "relaunch: newest restorable snapshot", 0});
      result.restored = backend.last_restore();
    }
  }
  for (auto i = backend.iterations_done(); i < config.iterations; ++i) {
    const bool restored_here = result.restored && result.restored->version == i;
    if (config.snapshot_every > 0 && i > 0 && i % config.snapshot_every == 0 && !restored_here) {
      backend.apply({core::SnapshotDirective{i},
                     "every " + std::to_string(config.snapshot_every) + " iterations", 0});
      result.snapshots.push_back(i);
    }
    if (config.kill && config.kill->iteration == i && config.kill->rank == world.rank())
      ::kill(::getpid(), SIGKILL);  // a real kill -9: no clean-up, shards stay in /dev/shm
    for (const auto& r : config.repartitions)
      if (r.before_iteration == i)
        backend.apply({core::RepartitionDirective{r.layers_per_stage}, "scheduled", 0});
    IterationRecord record;
    record.report = backend.step(scenario.plan);
    record.loss = backend.last_loss();
    if (on_iteration) on_iteration(record);
    result.iterations.push_back(std::move(record));
  }
  result.final_layers_per_stage = backend.layers_per_stage();
  if (!config.keep_snapshots) backend.remove_snapshots();
  return result;
}

}  // namespace parashift::hw
