#include "core/data_dir.hpp"

#include <system_error>

#ifndef PARASHIFT_DATA_DIR
#define PARASHIFT_DATA_DIR "scenarios"
#endif
#ifndef PARASHIFT_PLUGIN_DIR
#define PARASHIFT_PLUGIN_DIR "plugins"
#endif

namespace parashift::core {

namespace fs = std::filesystem;

fs::path shipped_data_dir_for(const fs::path& executable) {
  // The layout `cmake --install` writes (CMakeLists.txt's install rules).
  const fs::path installed =
      executable.parent_path().parent_path() / "share" / "parashift" / "scenarios";
  std::error_code ec;
  if (!executable.empty() && fs::is_directory(installed / "models", ec)) return installed;
  return fs::path(PARASHIFT_DATA_DIR);
}

fs::path shipped_plugin_dir_for(const fs::path& executable) {
  const fs::path installed =
      executable.parent_path().parent_path() / "lib" / "parashift" / "plugins";
  std::error_code ec;
  if (!executable.empty() && fs::is_directory(installed, ec)) return installed;
  return fs::path(PARASHIFT_PLUGIN_DIR);
}

namespace {

// Linux names the running executable at /proc/self/exe; where it cannot be
// read, the build-time folders are the answer.
fs::path self_executable() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : self;
}

}  // namespace

fs::path shipped_data_dir() {
  return shipped_data_dir_for(self_executable());
}

fs::path shipped_plugin_dir() {
  return shipped_plugin_dir_for(self_executable());
}

}  // namespace parashift::core
