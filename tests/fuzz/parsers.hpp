// The parsers the fuzz targets drive, by name: each reads one input the way
// the CLI does and may refuse it only with core::InputError. The libFuzzer
// targets (fuzz_target.cpp) and the regression test of inputs fuzzing found
// (regression_test.cpp) share this table.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace parashift::fuzz {

struct Parser {
  std::string_view name;       // the fuzz target is fuzz_<name>; corpus/fuzz_<name>/
  std::string_view file_name;  // what the input is called in messages
  void (*parse)(const std::string& text);
};

/// scenario, dot, graphml, published_csv, hf_config, failure_trace, calibration.
const std::vector<Parser>& parsers();
/// The parser named `name`; throws std::invalid_argument for another name.
const Parser& parser(std::string_view name);

/// The process's scratch directory (test::process_temp_dir(): mkdtemp, made on
/// first use, removed at exit).
const std::string& scratch_dir();

}  // namespace parashift::fuzz
