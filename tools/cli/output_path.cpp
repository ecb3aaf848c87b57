#include "tools/cli/output_path.hpp"

#include <filesystem>

#include <unistd.h>

#include "core/errors.hpp"

namespace parashift::tools {

void check_output_path(const std::string& option, const std::string& path) {
  if (path.empty() || path == "-") return;
  namespace fs = std::filesystem;
  const fs::path file(path);
  std::error_code ec;
  if (fs::is_directory(file, ec)) {
    throw core::InputError(option + " " + path + ": is a folder; expected a file name");
  }
  const fs::path dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec)) {
    throw core::EnvironmentError(
        option + " " + path + ": folder '" + dir.string() + "' does not exist",
        "create it, or name a file in a folder that exists");
  }
  const bool exists = fs::exists(file, ec);
  if (access(exists ? file.c_str() : dir.c_str(), W_OK) != 0) {
    throw core::EnvironmentError(option + " " + path + ": cannot write " +
                                     (exists ? "the file" : "into folder '" + dir.string() + "'"),
                                 "check that you may write there");
  }
}

}  // namespace parashift::tools
