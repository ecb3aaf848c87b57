// The plan of a job's newest snapshot, kept beside its shards: after a live
// re-plan the shards are the new plan's, and a relaunch must run that plan
// to restore them. Rank 0 writes it with each snapshot as the scenario
// overrides that make the plan (core::plan_overrides); the elastic
// supervisor passes them to the relaunch (`--set`), and a relaunch by hand
// is told them.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace parashift::hw {

/// DIR/parashift-JOB/plan.set (ShardStore::job_dir).
std::filesystem::path snapshot_plan_path(const std::filesystem::path& root, const std::string& job);
/// Replaces the file (written beside, then renamed: never torn).
void write_snapshot_plan(const std::filesystem::path& root, const std::string& job,
                         const std::vector<std::string>& overrides);
/// Its lines; empty when there is no such file.
std::vector<std::string> read_snapshot_plan(const std::filesystem::path& root,
                                            const std::string& job);

}  // namespace parashift::hw
