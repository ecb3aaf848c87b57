// `parashift simulate` on a shared cluster (a scenario with `jobs:`): the
// jobs' table and JSON; the options and commands that read one job refuse it.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli_harness.hpp"

using namespace parashift;

namespace {
const std::string kScenario =
    std::string(PARASHIFT_SOURCE_DIR) + "/scenarios/shared-cluster-4jobs.yaml";
}  // namespace

TEST_CASE("simulate runs a shared cluster's jobs and writes each one's iterations as JSON") {
  const std::string json = test::temp_file_path("shared.json");
  const auto r = test::run_parashift({"simulate", kScenario, "--iterations", "2", "--json", json});
  REQUIRE(r.status == 0);
  CHECK(r.out.find("shared cluster shared-cluster-4jobs: 4 jobs on 1024 of 1024") !=
        std::string::npos);
  const auto doc = nlohmann::json::parse(test::read_text_file(json));
  REQUIRE(doc["jobs"].size() == 4);
  for (const auto& job : doc["jobs"]) {
    CHECK(job["iterations"] == 2);  // --iterations sets every job's
    CHECK(job["iteration_time_s"].size() == 2);
    // Sharing links never makes a job faster than alone on the same GPUs.
    CHECK(job["mean_iteration_time_s"].get<double>() >=
          job["alone_iteration_time_s"].get<double>());
  }
  CHECK(doc["jobs"][1]["nodes"][0] == 16);  // llama3-8b from node 16 (placement.nodes)
  CHECK(doc["time_s"].get<double>() > 0);
  CHECK_FALSE(doc.contains("stagger"));
  CHECK(doc["jobs"][1]["start_s"] == 0);
}

TEST_CASE("simulate --set stagger=true prints and writes the starts the module chose") {
  // The first job starts at 0, every other within its own iteration
  // (16 offsets over it); the overlap at the chosen starts is at most the
  // one with every job at 0 (offset 0 is among the candidates).
  const std::string json = test::temp_file_path("stagger.json");
  const auto r = test::run_parashift(
      {"simulate", kScenario, "--iterations", "2", "--set", "stagger=true", "--json", json});
  REQUIRE(r.status == 0);
  CHECK(r.out.find("stagger: llama3-70b at 0.000 s, llama3-8b at ") != std::string::npos);
  const auto doc = nlohmann::json::parse(test::read_text_file(json));
  REQUIRE(doc.contains("stagger"));
  CHECK(doc["stagger"]["overlap_s"].get<double>() <=
        doc["stagger"]["unstaggered_overlap_s"].get<double>());
  CHECK(doc["jobs"][0]["start_s"] == 0);
  for (const auto& job : doc["jobs"]) {
    CHECK(job["start_s"].get<double>() >= 0);
    CHECK(job["start_s"].get<double>() < job["alone_iteration_time_s"].get<double>());
  }
}

TEST_CASE("a shared cluster refuses the options and commands that read one job: exit 2") {
  for (const char* option : {"--compare", "--links"}) {
    const auto r = test::run_parashift(
        {"simulate", kScenario, option,
         std::string(option) == "--compare" ? "traffic.grad_sync=2" : "links.csv"});
    CHECK(r.status == 2);
    CHECK(r.err.find(std::string(option) + ": not available for a shared cluster") !=
          std::string::npos);
  }
  const auto plan = test::run_parashift({"plan", kScenario});
  CHECK(plan.status == 2);
  CHECK(plan.err.find("runs under `parashift simulate` only") != std::string::npos);
}
