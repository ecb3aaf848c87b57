// Writing a command's --json FILE, with a clear error when it cannot be written.
#pragma once

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

namespace parashift::tools {

/// Writes `value` pretty-printed (2-space indent) to `path`; throws
/// core::InputError naming the path when it cannot be written.
void write_json_file(const std::string& path, const nlohmann::json& value);

/// `path` opened for writing; throws the unwritable-path EnvironmentError
/// (exit 3) when it cannot be.
std::ofstream open_output_file(const std::string& path);

}  // namespace parashift::tools
