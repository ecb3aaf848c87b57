// The snapshot + spares policy over one campaign run: the state and its
// segment model are in snapshot_run.hpp.
#include "sim/faults/policy_run.hpp"
#include "sim/faults/snapshot_run.hpp"

namespace parashift::sim {

PolicyRun run_snapshot_policy(CampaignSetup& setup, const std::vector<FailureEvent>& failures,
                              const std::vector<SlowEpisode>& episodes, TimeNs horizon_ns) {
  detail::SnapshotRun run(setup, horizon_ns);
  return run.run(failures, episodes);
}

}  // namespace parashift::sim
