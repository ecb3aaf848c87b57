// The sections of a scenario file, each read into a Scenario: shared by a
// one-job scenario (core/scenario/scenario.hpp) and each job of a shared
// cluster (core/scenario/shared_cluster.hpp). Every error is an InputError
// naming the file, line and field.
#pragma once

#include <filesystem>
#include <string>

#include "core/scenario/scenario.hpp"
#include "core/scenario/yaml_fields.hpp"

namespace parashift::core {

/// A bound, not a tuning: 1,000 re-simulated iterations of the noisy 64-GPU
/// scenario take ~15 s, and the mutation check found 10^7 running past 300 s.
inline constexpr int kMaxRunIterations = 1'000'000;

/// The scenario file's text parsed: a map of fields (`name` in messages).
YAML::Node load_scenario_root(const std::string& yaml_text, const std::string& name);

/// `model:` (a preset name or a map) of `root`; relative files from `dir`.
ModelSpec read_model(YamlFields& root, const std::string& file, const std::filesystem::path& dir);
/// `cluster:` of `top`: device or groups, topology (generated or loaded), truth.
void read_cluster(YamlFields& top, Scenario& s, const std::filesystem::path& dir);
/// `training:` (s.device set first: fp8 needs FP8 tensor cores).
void read_training(YamlFields& training, Scenario& s, const std::filesystem::path& dir);
/// `plan:` of `top` for s.model, s.training and s.topology. Under
/// options.plan_optional a plan that does not fit is recorded in
/// s.plan_problem, not refused.
void read_plan(YamlFields& top, const YamlFields& training, Scenario& s,
               const ScenarioOptions& options);
/// `run:` of `top`, when present.
void read_run(YamlFields& top, Scenario& s);
/// `traffic:` of `top`: the classes' weights (every class at 1 when absent).
void read_traffic(YamlFields& top, Scenario& s);
/// `policy:` of `top` (every module off when absent), its batch bounds
/// checked against s.plan.
void read_policy(YamlFields& top, Scenario& s, const std::filesystem::path& dir);

}  // namespace parashift::core
