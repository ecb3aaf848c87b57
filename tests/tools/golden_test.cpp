// The default scenario's JSON is compared byte for byte with the committed
// golden file. After an intended change, regenerate it with
//   PARASHIFT_UPDATE_GOLDEN=1 ctest -R golden
// and review the diff.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/temp_dir.hpp"
#include "tools/cli/command.hpp"

namespace {
std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

TEST_CASE("golden: default scenario JSON is unchanged") {
  const std::string source = PARASHIFT_SOURCE_DIR;
  const std::string golden = source + "/tests/golden/default.json";
  const std::string produced =
      parashift::test::process_temp_dir().file("golden-default.json").string();
  const std::string scenario = source + "/scenarios/default.yaml";
  const char* argv[] = {"parashift", "simulate", scenario.c_str(), "--json", produced.c_str()};
  std::ostringstream out, err;
  REQUIRE(parashift::tools::run_cli(5, argv, out, err) == 0);
  if (const char* update = std::getenv("PARASHIFT_UPDATE_GOLDEN"); update && *update == '1') {
    std::filesystem::copy_file(produced, golden, std::filesystem::copy_options::overwrite_existing);
    MESSAGE("golden file regenerated: " << golden);
  }
  const std::string expected = slurp(golden);
  REQUIRE_MESSAGE(!expected.empty(), "missing golden file " << golden);
  CHECK_MESSAGE(slurp(produced) == expected,
                "default scenario output changed; diff "
                    << produced << " " << golden
                    << " and regenerate with PARASHIFT_UPDATE_GOLDEN=1 if intended");
}
