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

TEST_CASE("plan: --top must be between 1 and 1000, said in one short line") {
  const Result r = cli({"plan", kScenario, "--top", "0"});
  CHECK(r.status == 2);
  CHECK(r.err.find("--top: Value 0 not in range 1 to 1000") != std::string::npos);
  CHECK(count(r.err, "\n") == 1);
  CHECK(r.err.size() < 200);  // no 300-digit bound
}

TEST_CASE("plan: a pin no plan can meet exits 2 naming it") {
  // tp=3 divides none of Llama-2 7B's 32 heads; dp=7 does not divide 16 GPUs.
  for (const char* pin : {"tp=3", "dp=7"}) {
    const Result r = cli({"plan", kScenario, "--pin", pin});
    INFO(r.err);
    CHECK(r.status == 2);
    CHECK(r.err.find(std::string("--pin ") + pin + ": no valid plan has it on 16 = 2^4 GPUs") !=
          std::string::npos);
    CHECK(count(r.err, "\n") == 1);
  }
  // Each alone is possible, together not: tp 8 x pp 4 = 32 > 16 GPUs.
  const Result both = cli({"plan", kScenario, "--pin", "tp=8", "--pin", "pp=4"});
  CHECK(both.status == 2);
  CHECK(both.err.find("--pin: no valid plan meets all of tp=8 pp=4 together") != std::string::npos);
}

TEST_CASE("plan: a dimension pinned twice is refused") {
  const Result r = cli({"plan", kScenario, "--pin", "tp=8", "--pin", "plan.tp=4"});
  CHECK(r.status == 2);
  CHECK(r.err.find("--pin tp given twice ('tp=8' and 'plan.tp=4')") != std::string::npos);
}

TEST_CASE("plan: works without a plan section, and with a plan that no longer fits") {
  const std::string no_plan = parashift::test::process_temp_dir().file("no-plan.yaml").string();
  {
    std::ifstream in(kScenario);
    std::ofstream out(no_plan);
    // The same scenario up to its `plan:` section.
    for (std::string line; std::getline(in, line) && line != "plan:";) out << line << "\n";
  }
  const Result r = cli({"plan", no_plan, "--top", "2"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("\n    1  tp") != std::string::npos);
  CHECK(r.out.find("scenario plan") == std::string::npos);  // there is none to rank

  // dp: 4 is written for 16 GPUs; on 4 nodes (32 GPUs) the search still runs
  // and the scenario's plan is reported as not valid, with the reason.
  const Result grown = cli({"plan", kScenario, "--set", "cluster.topology.nodes=4"});
  INFO(grown.err);
  REQUIRE(grown.status == 0);
  CHECK(grown.out.find("on 32 x h100-sxm-80gb") != std::string::npos);
  CHECK(grown.out.find("scenario plan: not valid for this cluster: ") != std::string::npos);
  CHECK(grown.out.find("differs from the cluster's 32 GPUs") != std::string::npos);
}

TEST_CASE("plan: --help shows the --top default and an example") {
  const Result r = cli({"plan", "--help"});
  CHECK(r.status == 0);
  CHECK(r.out.find("--top N:INT in [1 - 1000]=10") != std::string::npos);
  CHECK(r.out.find("Examples:") != std::string::npos);
}

TEST_CASE("plan: the scenario plan's rank is its place in the list, or says it is not listed") {
  const std::string path = parashift::test::process_temp_dir().file("plan-rank.json").string();
  // tp2 pp2 dp4 1f1b is one of the enumerated plans: a real rank.
  const Result listed = cli({"plan", kScenario, "--json", path});
  REQUIRE(listed.status == 0);
  CHECK(listed.out.find("scenario plan: rank ") != std::string::npos);
  {
    std::ifstream in(path);
    CHECK(nlohmann::json::parse(in)["scenario_plan"]["in_space"] == true);
  }
  // 32 layers over pp 2 x 3 virtual stages do not split evenly: valid, but
  // the search never enumerates it, so no listed rank belongs to it.
  const Result uneven = cli({"plan", kScenario, "--set", "plan.virtual_stages=3", "--set",
                             "plan.schedule=interleaved_1f1b", "--json", path});
  INFO(uneven.err);
  REQUIRE(uneven.status == 0);
  CHECK(uneven.out.find("scenario plan: would rank ") != std::string::npos);
  CHECK(uneven.out.find("the search does not enumerate it") != std::string::npos);
  CHECK(uneven.out.find("\n    -  tp2 pp2 dp4 cp1 v3") != std::string::npos);
  std::ifstream in(path);
  CHECK(nlohmann::json::parse(in)["scenario_plan"]["in_space"] == false);
}
