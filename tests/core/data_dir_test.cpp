#include "core/data_dir.hpp"

#include <doctest/doctest.h>

#include "tests/temp_dir.hpp"

namespace fs = std::filesystem;
using parashift::core::shipped_data_dir_for;

TEST_CASE("an installed binary reads the presets beside it, any other reads the source tree") {
  const parashift::test::TempDir prefix("parashift-data-dir");
  const fs::path executable = prefix.path() / "bin" / "parashift";
  const fs::path installed = prefix.path() / "share" / "parashift" / "scenarios";
  const fs::path source_tree = shipped_data_dir_for(fs::path());
  // Without PREFIX/share/parashift/scenarios/models the build-time folder
  // (the source tree's scenarios/, which holds the model presets) answers.
  CHECK(shipped_data_dir_for(executable) == source_tree);
  CHECK(fs::is_directory(source_tree / "models"));
  // The folder alone is not an install: it must hold models/.
  fs::create_directories(installed);
  CHECK(shipped_data_dir_for(executable) == source_tree);
  fs::create_directories(installed / "models");
  CHECK(shipped_data_dir_for(executable) == installed);
}

TEST_CASE("an installed binary loads plugins named without a '/' from PREFIX/lib/parashift") {
  const parashift::test::TempDir prefix("parashift-plugin-dir");
  const fs::path executable = prefix.path() / "bin" / "parashift";
  const fs::path installed = prefix.path() / "lib" / "parashift" / "plugins";
  const fs::path build_tree = parashift::core::shipped_plugin_dir_for(fs::path());
  // The build tree's folder holds the example plugin the build made.
  CHECK(fs::is_regular_file(build_tree / "libspeed_split.so"));
  CHECK(parashift::core::shipped_plugin_dir_for(executable) == build_tree);
  fs::create_directories(installed);
  CHECK(parashift::core::shipped_plugin_dir_for(executable) == installed);
}
