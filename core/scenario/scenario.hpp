// A what-if scenario: model, cluster, training, plan and run settings, read
// from YAML by one loader that validates every field.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "core/controller/policy_config.hpp"
#include "core/convergence/convergence_model.hpp"
#include "core/cost/device_groups.hpp"
#include "core/cost/nccl_model.hpp"
#include "core/device_spec.hpp"
#include "core/faults/fault_config.hpp"
#include "core/model_spec.hpp"
#include "core/parallel_plan.hpp"
#include "core/scenario/cluster_truth.hpp"
#include "core/traffic_class.hpp"
#include "core/units.hpp"
#include "topologies/topology.hpp"

namespace parashift::core {

struct TopologySource {
  std::string file;       // a .dot / .graphml path (resolved), or
  std::string generator;  // a generator name with its parameters
  std::map<std::string, std::string> params;
  std::string describe() const;
};

struct TrainingSpec {
  int global_batch = 0;  // sequences per iteration
  int seq_len = 0;
  Precision precision = Precision::Bf16;
  /// `training.text`: a text file (resolved against the scenario's
  /// directory) the executor trains a character-level language model on
  /// (hw/model/text_task.hpp); empty: its synthetic data. The simulator's
  /// times do not depend on the data and do not read it.
  std::string text;
};

struct RunSpec {
  int iterations = 1;      // iterations to run, or
  TimeNs duration_ns = 0;  // simulated wall time to cover (0: use iterations)
  std::uint64_t seed = 1;
  bool contention = true;  // max-min shared links (network: maxmin) or each transfer alone (path)
};

struct Scenario {
  std::string name;
  std::string file;  // as given, for messages
  ModelSpec model;
  /// The device (`cluster.device`), or the first group's under `cluster.groups`.
  DeviceSpec device;
  /// `cluster.groups`: the device of each range of GPUs; empty when the
  /// cluster is all `device`.
  std::vector<DeviceGroup> device_groups;
  TopologySource topology_source;
  topo::Topology topology;
  /// What the simulated cluster really is (`cluster.truth`): the simulator
  /// runs it; the policy, the planner and every estimate use the preset.
  ClusterTruth truth;
  /// `cluster.nccl_algo`: the collective algorithm pinned for every
  /// command, as NCCL_ALGO pins it on a cluster; auto: NCCL's tuner.
  NcclAlgo nccl_algo = NcclAlgo::Auto;
  TrainingSpec training;
  ParallelPlan plan;
  /// False when the file has no `plan:` section (allowed only under
  /// ScenarioOptions::plan_optional; `plan` then holds the defaults).
  bool has_plan = true;
  /// Under plan_optional: why the written plan does not fit this cluster,
  /// model or batch (e.g. a `dp` written for another cluster size); empty
  /// when it does. Field errors (unknown keys, wrong types) still throw.
  std::string plan_problem;
  RunSpec run;
  PolicyConfig policy;                // every module off unless the `policy:` section turns it on
  std::optional<FaultConfig> faults;  // the `faults:` section, when present
  TrafficWeights traffic;             // the `traffic:` section: every class at 1 unless set
  /// The `convergence:` section: a convergence model the simulator runs
  /// (the batch module reads only the gradient norms it reports).
  std::optional<ConvergenceSpec> convergence;
};

/// How strictly to read the `plan:` section.
struct ScenarioOptions {
  /// The plan search (`parashift plan`) needs no plan of its own: the section
  /// may be missing, and a plan that does not fit the cluster is reported
  /// (Scenario::plan_problem) instead of refused.
  bool plan_optional = false;
  /// A job of a shared cluster: the plan sets how many GPUs it runs on (dp
  /// must be given), not the topology; its placement is checked apart.
  bool plan_sets_gpus = false;
};

/// Applies "key.path=value" overrides (CLI --set) to a parsed YAML document.
/// The value is parsed as YAML, so numbers and booleans keep their types.
void apply_overrides(YAML::Node& root, const std::vector<std::string>& overrides);

/// Reads, overrides, validates. Every error is an InputError naming the file,
/// the field and what was expected.
Scenario load_scenario(const std::filesystem::path& file,
                       const std::vector<std::string>& overrides = {},
                       const ScenarioOptions& options = {});

/// Same, from YAML text (`file` is only used in messages and to resolve
/// relative paths).
Scenario parse_scenario(const std::string& yaml_text, const std::filesystem::path& file,
                        const std::vector<std::string>& overrides = {},
                        const ScenarioOptions& options = {});

/// Where model presets are looked up: <scenario dir>/models, then the
/// shipped scenarios/models.
ModelSpec load_model_preset(const std::string& name, const std::filesystem::path& scenario_dir);

}  // namespace parashift::core
