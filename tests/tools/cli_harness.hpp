// Runs the parashift command line in-process and captures what it prints.
#pragma once

#include <sstream>
#include <string>
#include <vector>

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

}  // namespace parashift::test
