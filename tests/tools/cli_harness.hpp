// Runs the parashift command line in-process and captures what it prints.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/temp_dir.hpp"
#include "tools/cli/command.hpp"

namespace parashift::test {

struct CliResult {
  int status = 0;
  std::string out;
  std::string err;
};

/// `args` without the program name, e.g. {"simulate", "x.yaml"}.
inline CliResult run_parashift(std::vector<std::string> args) {
  args.insert(args.begin(), "parashift");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  CliResult r;
  r.status = tools::run_cli(static_cast<int>(argv.size()), argv.data(), out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

/// The whole file as text ("" when it cannot be read).
inline std::string read_text_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// A path for `name` in this test process's own temporary directory
/// (mkdtemp, removed at exit), so two runs never share a file.
inline std::string temp_file_path(const std::string& name) {
  return process_temp_dir().file(name).string();
}

}  // namespace parashift::test
