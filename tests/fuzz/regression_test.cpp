// Every input in tests/fuzz/corpus/<parser>/ (the seeds) and
// tests/fuzz/regressions/<parser>/ (what fuzzing found) either parses or is
// refused with core::InputError: one line that names the input. Anything
// else (another exception, a crash under the sanitizers) fails.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/input_error.hpp"
#include "core/scenario/scenario.hpp"
#include "tests/fuzz/parsers.hpp"

namespace fs = std::filesystem;
using parashift::fuzz::Parser;

namespace {

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<fs::path> inputs_of(const std::string& parser) {
  std::vector<fs::path> out;
  for (const char* set : {"corpus", "regressions"}) {
    const fs::path dir = fs::path(PARASHIFT_SOURCE_DIR) / "tests/fuzz" / set / parser;
    if (!fs::is_directory(dir)) continue;
    for (const auto& entry : fs::directory_iterator(dir)) out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("every seed and every input fuzzing found parses or gets one located line") {
  int refused = 0;
  for (const Parser& parser : parashift::fuzz::parsers()) {
    const auto inputs = inputs_of(std::string(parser.name));
    INFO(parser.name);
    CHECK(!inputs.empty());  // each parser has seeds
    for (const fs::path& input : inputs) {
      INFO(input.string());
      try {
        parser.parse(read_file(input));
      } catch (const parashift::core::InputError& e) {
        ++refused;
        const std::string message = e.what();
        INFO(message);
        CHECK(message.find(parser.file_name) != std::string::npos);
        CHECK(message.find('\n') == std::string::npos);
      }
    }
  }
  // The seeds hold bad files too (tests/topologies/data/bad_*.dot and others).
  CHECK(refused > 0);
}

TEST_CASE("mutation check: run.iterations inflated past the bound is refused, not run for hours") {
  // scenarios/default.yaml has 10 iterations; x10^6 ran past 300 s in `simulate`.
  const std::string scenario = std::string(PARASHIFT_SOURCE_DIR) + "/scenarios/default.yaml";
  CHECK_NOTHROW(parashift::core::load_scenario(scenario, {"run.iterations=1000000"}));
  try {
    (void)parashift::core::load_scenario(scenario, {"run.iterations=10000000"});
    FAIL("no error");
  } catch (const parashift::core::InputError& e) {
    const std::string message = e.what();
    INFO(message);
    CHECK(message.find("default.yaml") != std::string::npos);
    CHECK(message.find("run.iterations") != std::string::npos);
    CHECK(message.find("expected at most 1000000 iterations, found 10000000") != std::string::npos);
  }
}

TEST_CASE("mutation check: a model preset name too long for a path is an unknown preset") {
  // straggler-gpu-2x.yaml's `model: gpt3-175b` repeated 64 times made fs::exists throw
  // (File name too long), an internal error; a name with '/' must not reach outside models/.
  const std::string scenario = std::string(PARASHIFT_SOURCE_DIR) + "/scenarios/default.yaml";
  for (const std::string& model : {std::string(640, 'g'), std::string("../models/llama3-8b")}) {
    try {
      (void)parashift::core::load_scenario(scenario, {"model=" + model});
      FAIL("no error");
    } catch (const parashift::core::InputError& e) {
      const std::string message = e.what();
      INFO(message);
      CHECK(message.find("unknown model preset") != std::string::npos);
    }
  }
}
