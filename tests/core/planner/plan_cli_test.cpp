#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../../tools/cli_harness.hpp"
#include "tests/temp_dir.hpp"

namespace {

const std::string kScenario =
    std::string(PARASHIFT_SOURCE_DIR) + "/tests/core/planner/data/small_plan.yaml";

using Result = parashift::test::CliResult;

Result cli(std::vector<std::string> args) {
  return parashift::test::run_parashift(std::move(args));
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("plan: prints the ranking, the scenario plan and why the best wins") {
  const Result r = cli({"plan", kScenario, "--top", "3"});
  INFO(r.err);
  INFO(r.out);
  REQUIRE(r.status == 0);
  for (const char* field : {"search:", "valid plans", "evaluated in", "tokens/s", "MFU %",
                            "mem GiB", "bubble %", "dp exp s", "scenario plan: rank",
                            "why the best wins", "vs runner-up", "biggest differences"}) {
    CHECK(r.out.find(field) != std::string::npos);
  }
  // Three ranked rows, each starting with its rank.
  CHECK(r.out.find("\n    1  tp") != std::string::npos);
  CHECK(r.out.find("\n    3  tp") != std::string::npos);
  CHECK(r.out.find("\n    4  tp") == std::string::npos);
}

TEST_CASE("plan: --pin restricts the search and --json writes the same result") {
  const std::string path = parashift::test::process_temp_dir().file("plan.json").string();
  const Result r = cli({"plan", kScenario, "--pin", "plan.tp=2", "--pin", "pp=1", "--json", path});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("pins: tp=2 pp=1") != std::string::npos);
  std::ifstream in(path);
  const nlohmann::json json = nlohmann::json::parse(in);
  REQUIRE(json["top"].size() == 10);
  for (const auto& row : json["top"]) {
    CHECK(row["plan"]["tp"] == 2);
    CHECK(row["plan"]["pp"] == 1);
  }
  CHECK(json["search"]["evaluated"].get<long>() > 0);
  // The scenario's plan (tp2 pp2) lies outside pp=1.
  CHECK(json["scenario_plan"]["matches_pins"] == false);
  CHECK(json["why"].contains("vs_runner_up"));
  CHECK(count(r.out, "\n") > 10);
}

TEST_CASE("plan: a bad pin value exits 2 naming the key") {
  const Result r = cli({"plan", kScenario, "--pin", "tp=eight"});
  CHECK(r.status == 2);
  CHECK(r.err.find("--pin tp: expected an integer >= 1, found 'eight'") != std::string::npos);
  CHECK(count(r.err, "\n") == 1);
}

TEST_CASE("plan: an unknown pin key exits 2 naming it") {
  const Result r = cli({"plan", kScenario, "--pin", "plan.bogus=1"});
  CHECK(r.status == 2);
  CHECK(r.err.find("unknown key 'bogus'") != std::string::npos);
}

TEST_CASE("plan: --top must be positive") {
  CHECK(cli({"plan", kScenario, "--top", "0"}).status == 2);
}

TEST_CASE("plan: a cluster with no valid split says why") {
  // tp=3 divides none of Llama-2 7B's 32 heads: the space is empty.
  const Result r = cli({"plan", kScenario, "--pin", "tp=3"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("no valid plan fits: no split of 16 = 2^4 GPUs") != std::string::npos);
}
