#include "tools/cli/output_file.hpp"

#include <fstream>

#include "core/input_error.hpp"

namespace parashift::tools {

std::ofstream open_output_file(const std::string& path) {
  std::ofstream file(path);
  if (!file) throw core::unwritable_path(path);
  return file;
}

void write_json_file(const std::string& path, const nlohmann::json& value) {
  std::ofstream file = open_output_file(path);
  file << value.dump(2) << "\n";
  if (!file) throw core::InputError(path + ": write failed");
}

}  // namespace parashift::tools
