// Helpers shared by the controller tests.
#pragma once

#include <string>

#include <yaml-cpp/yaml.h>

#include "core/controller/policy_config.hpp"
#include "core/input_error.hpp"
#include "core/scenario/yaml_fields.hpp"

namespace parashift::test {

/// A PolicyConfig read from YAML text, as the scenario loader reads `policy:`.
inline core::PolicyConfig policy_from_yaml(const std::string& text) {
  const YAML::Node root = YAML::Load(text);
  core::YamlFields fields(root, "policy", "scenario.yaml");
  return core::read_policy_config(fields);
}

/// The InputError that reading `text` as a policy section throws, or "no error".
inline std::string policy_error(const std::string& text) {
  try {
    policy_from_yaml(text);
  } catch (const core::InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace parashift::test
