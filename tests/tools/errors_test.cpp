// The one error model (core/errors.hpp): each tier's exit status and its one
// line, as the CLI's single mapping (tools::report_error) prints it.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "cli_harness.hpp"
#include "core/assert.hpp"
#include "core/errors.hpp"
#include "core/input_file.hpp"
#include "hw/hw_error.hpp"
#include "tests/temp_dir.hpp"
#include "tools/cli/command.hpp"
#include "topologies/topology.hpp"

namespace {

struct Reported {
  int status = 0;
  std::string err;
};

Reported report(const std::exception& e) {
  std::ostringstream err;
  const int status = parashift::tools::report_error(e, err);
  return {status, err.str()};
}

int lines(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

// Throws from a named line so the test can check the reported location.
constexpr int kAssertLine = __LINE__ + 2;
void check_positive(int value) {
  PARASHIFT_ASSERT(value > 0, "value=", value, " must be positive");
}

}  // namespace

using namespace parashift;

TEST_CASE("an input error exits 2 with its located message on one line") {
  const Reported r = report(core::InputError("a.yaml: plan.tp: expected a positive integer"));
  CHECK(r.status == 2);
  CHECK(r.err == "parashift: error: a.yaml: plan.tp: expected a positive integer\n");
}

TEST_CASE("a topology error is an input error: exit 2") {
  const Reported r = report(topo::TopologyError("x.dot: line 3: expected a bandwidth"));
  CHECK(r.status == 2);
  CHECK(r.err == "parashift: error: x.dot: line 3: expected a bandwidth\n");
}

TEST_CASE("an environment error exits 3 and says what to do") {
  const Reported r = report(core::EnvironmentError("no CUDA device", "use --backend hw"));
  CHECK(r.status == 3);
  CHECK(r.err == "parashift: error: no CUDA device (use --backend hw)\n");
  // hw/'s failures (MPI, CUDA, NCCL, snapshot shards) are environment errors.
  const Reported hw = report(hw::HwError("MPI_Send failed: rank 3 gone", "relaunch the job"));
  CHECK(hw.status == 3);
  CHECK(hw.err == "parashift: error: MPI_Send failed: rank 3 gone (relaunch the job)\n");
  CHECK(lines(report(hw::HwError("MPI_Init_thread failed")).err) == 1);
}

TEST_CASE("an unwritable output path exits 3 from the command line") {
  // A folder that does not exist, inside this test's own temporary directory.
  const test::TempDir tmp;
  const std::string missing = tmp.file("no-such-dir").string();
  const auto r = test::run_parashift(
      {"simulate", std::string(PARASHIFT_SOURCE_DIR) + "/tests/tools/data/small.yaml", "--trace",
       missing + "/t.json"});
  CHECK(r.status == 3);
  CHECK(lines(r.err) == 1);
  // Checked before the run (tools/cli/output_path.cpp), for every output option.
  CHECK(r.err.find("parashift: error: --trace " + missing + "/t.json: folder '" + missing +
                   "' does not exist (create it") == 0);
  const std::string small = std::string(PARASHIFT_SOURCE_DIR) + "/tests/tools/data/small.yaml";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"simulate", small, "--json", missing + "/s.json"},
        std::vector<std::string>{"faults", small, "--json", missing + "/f.json"},
        std::vector<std::string>{"sweep", small, "--grid", "plan.tp=1,2", "--csv",
                                 missing + "/s.csv"},
        std::vector<std::string>{"topo", "rail-fat-tree", "--param", "nodes=2", "--dot",
                                 missing + "/t.dot"}}) {
    const auto e = test::run_parashift(args);
    INFO(args[0]);
    CHECK(e.status == 3);
    CHECK(e.err.find("folder '" + missing + "' does not exist") != std::string::npos);
  }
  CHECK(!std::filesystem::exists(missing));
}

TEST_CASE("a failed PARASHIFT_ASSERT is an internal error naming file, line and context") {
  CHECK_NOTHROW(check_positive(1));
  std::string message;
  try {
    check_positive(-4);
  } catch (const core::InternalError& e) {
    message = e.what();
  }
  // The path is the one the compiler was given, less any leading "../"
  // (core/assert.hpp): relative under ccache, absolute without it.
  const std::string expected = "tests/tools/errors_test.cpp:" + std::to_string(kAssertLine) +
                               ": check 'value > 0' failed: value=-4 must be positive";
  REQUIRE(message.size() >= expected.size());
  CHECK(message.substr(message.size() - expected.size()) == expected);
  CHECK(message.find("../") == std::string::npos);
  const Reported r = report(core::InternalError(message));
  CHECK(r.status == 1);
  CHECK(r.err == "parashift: internal error: " + message + "\n");
}

TEST_CASE("any other exception is an internal error: exit 1") {
  const Reported r = report(std::logic_error("vector::at"));
  CHECK(r.status == 1);
  CHECK(r.err == "parashift: internal error: vector::at\n");
}

TEST_CASE("an input file over its size bound is refused before it is read") {
  const test::TempDir dir;
  const auto path = dir.file("big.yaml");
  std::ofstream(path) << "name: twelve\n";  // 13 bytes
  CHECK(core::read_input_file(path, "scenario file", 13) == "name: twelve\n");
  try {
    (void)core::read_input_file(path, "scenario file", 12);
    FAIL("no error");
  } catch (const core::InputError& e) {
    CHECK(std::string(e.what()) ==
          path.string() + ": scenario file of 13 bytes; expected at most 12");
  }
  CHECK_THROWS_WITH_AS((void)core::read_input_file(dir.file("none.yaml"), "scenario file"),
                       (dir.file("none.yaml").string() + ": cannot open scenario file").c_str(),
                       core::InputError);
}
