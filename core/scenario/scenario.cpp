#include "core/scenario/scenario.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "core/controller/policy_registry.hpp"
#include "core/data_dir.hpp"
#include "core/faults/duration.hpp"
#include "core/input_error.hpp"
#include "core/input_file.hpp"
#include "core/scenario/cluster_groups.hpp"
#include "core/scenario/cluster_truth.hpp"
#include "core/scenario/hf_config.hpp"
#include "core/scenario/model_yaml.hpp"
#include "core/scenario/scenario_sections.hpp"
#include "core/scenario/yaml_fields.hpp"

namespace parashift::core {

namespace fs = std::filesystem;

std::string TopologySource::describe() const {
  if (!file.empty()) return file;
  std::string s = generator;
  for (const auto& [key, value] : params) s += " " + key + "=" + value;
  return s;
}

void apply_overrides(YAML::Node& root, const std::vector<std::string>& overrides) {
  for (const auto& item : overrides) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw InputError("--set " + item + ": expected key.path=value");
    }
    const std::string key = item.substr(0, eq);
    const std::string text = item.substr(eq + 1);
    std::vector<std::string> parts;
    std::stringstream split(key);
    for (std::string part; std::getline(split, part, '.');) {
      if (part.empty()) throw InputError("--set " + item + ": empty field name in '" + key + "'");
      parts.push_back(part);
    }
    YAML::Node value;
    try {
      value = YAML::Load(text);
    } catch (const YAML::Exception& e) {
      throw InputError("--set " + item + ": value is not valid YAML (" + e.msg + ")");
    }
    // Walk with reset() copies: yaml-cpp nodes are handles into one document.
    YAML::Node cursor;
    cursor.reset(root);
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
      YAML::Node next = cursor[parts[i]];
      if (i == 0 && parts[0] == "model" && next && next.IsScalar()) {
        // `model: llama3-70b` with `--set model.layers=40`: the preset plus an override.
        YAML::Node with_preset(YAML::NodeType::Map);
        with_preset["preset"] = next.Scalar();
        cursor["model"] = with_preset;
        next.reset(cursor["model"]);
      }
      if (next && !next.IsNull() && !next.IsMap()) {
        std::string prefix;
        for (std::size_t j = 0; j <= i; ++j) prefix += (j ? "." : "") + parts[j];
        throw InputError("--set " + item + ": '" + prefix + "' is not a map of fields");
      }
      if (!next || next.IsNull()) {
        cursor[parts[i]] = YAML::Node(YAML::NodeType::Map);
        next.reset(cursor[parts[i]]);
      }
      cursor.reset(next);
    }
    cursor[parts.back()] = value;
  }
}

ModelSpec load_model_preset(const std::string& name, const fs::path& scenario_dir) {
  const std::vector<fs::path> dirs = {scenario_dir / "models", shipped_data_dir() / "models"};
  for (const auto& dir : dirs) {
    const fs::path file = dir / (name + ".yaml");
    // A name too long for a path, with '/' or with a NUL (the path would end at
    // the directory) is an unknown preset, not a crash.
    std::error_code ec;
    if (name.find_first_of(std::string("/\0", 2)) != std::string::npos ||
        !fs::is_regular_file(file, ec)) {
      continue;
    }
    YAML::Node doc;
    try {
      doc = YAML::LoadFile(file.string());
    } catch (const YAML::Exception& e) {
      throw InputError(file.string() + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
    }
    YamlFields fields(doc, "model", file.string());
    ModelSpec m = read_model_fields(fields, ModelSpec{});
    fields.reject_unknown();
    if (m.name.empty()) m.name = name;
    try {
      m.validate();
    } catch (const InputError& e) {
      throw InputError(file.string() + ": " + e.what());
    }
    return m;
  }
  // Each name once: the scenario's own models/ folder is often the shipped one.
  std::set<std::string> names;
  for (const auto& dir : dirs) {
    if (!fs::is_directory(dir)) continue;
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.path().extension() == ".yaml") names.insert(entry.path().stem().string());
    }
  }
  std::string known;
  for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
  std::error_code ec;
  const bool same = fs::equivalent(dirs[0], dirs[1], ec);
  throw InputError("unknown model preset '" + name + "' (known: " + known + "; looked in " +
                   dirs[0].string() + (same ? "" : " and " + dirs[1].string()) + ")");
}

Scenario parse_scenario(const std::string& yaml_text, const fs::path& file,
                        const std::vector<std::string>& overrides, const ScenarioOptions& options) {
  const std::string name = file.string();
  YAML::Node root = load_scenario_root(yaml_text, name);
  if (root["jobs"])
    throw InputError(yaml_location(name, root["jobs"]) +
                     "jobs: a shared cluster (several jobs) runs under `parashift simulate` only");
  apply_overrides(root, overrides);
  std::set<std::string> overridden;
  for (const auto& item : overrides) overridden.insert(item.substr(0, item.find('=')));

  const fs::path dir = file.parent_path();
  Scenario s;
  s.file = name;
  YamlFields top(root, "", name, &overridden);
  s.name = top.optional_string("name").value_or(file.stem().string());
  s.model = read_model(top, name, dir);

  read_cluster(top, s, dir);

  YamlFields training = top.map("training");
  read_training(training, s, dir);

  if (options.plan_optional && !top.has("plan")) {
    top.allow("plan");
    s.has_plan = false;
    s.plan.dp = s.topology.gpu_count();
    s.plan.global_batch = s.training.global_batch;
    s.plan.precision = s.training.precision;
  } else {
    read_plan(top, training, s, options);
  }

  read_run(top, s);
  read_policy(top, s, dir);
  if (top.has("faults")) {
    YamlFields faults = top.map("faults");
    s.faults = read_fault_config(faults);
    for (const FaultEvent& e : s.faults->events)
      if (e.kind == FaultEventKind::Tenant && !s.run.contention)
        throw InputError(e.where +
                         ": a tenant shares links by flows; expected run.network: "
                         "maxmin, found path");
  } else {
    top.allow("faults");
  }
  read_traffic(top, s);
  if (top.has("convergence")) {
    YamlFields convergence = top.map("convergence");
    s.convergence = read_convergence(convergence, dir);
  } else {
    top.allow("convergence");
  }
  top.reject_unknown();
  return s;
}

Scenario load_scenario(const fs::path& file, const std::vector<std::string>& overrides,
                       const ScenarioOptions& options) {
  return parse_scenario(read_input_file(file, "scenario file"), file, overrides, options);
}

}  // namespace parashift::core
