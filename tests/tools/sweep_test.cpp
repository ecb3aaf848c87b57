// `parashift sweep`: grid order, determinism across thread counts, shards,
// bad input, and the SVG writer.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"
#include "tools/cli/svg_plot.hpp"

namespace {

const std::string kSmall = std::string(PARASHIFT_SOURCE_DIR) + "/tests/tools/data/small.yaml";

using Result = parashift::test::CliResult;

Result cli(std::vector<std::string> args) {
  return parashift::test::run_parashift(std::move(args));
}

using parashift::test::read_text_file;

std::string temp_path(const std::string& name) {
  return parashift::test::temp_file_path("sweep-" + name);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream s(text);
  for (std::string line; std::getline(s, line);) out.push_back(line);
  return out;
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The tp x pp grid of small.yaml (16 GPUs, dp derived; its plan has sequence
// parallelism, so tp starts at 2).
std::vector<std::string> grid_args(const std::string& csv) {
  return {"sweep",         kSmall,   "--set",       "plan.dp=null", "--grid",
          "plan.tp=2,4,3", "--grid", "plan.pp=1,2", "--csv",        csv};
}

std::vector<std::string> operator+(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

TEST_CASE("sweep: one row per point in grid order, the last key fastest") {
  const std::string csv = temp_path("grid.csv");
  std::vector<std::string> args = grid_args(csv);
  const std::string svg = temp_path("grid.svg");
  args.insert(args.end(), {"--plot", svg});
  const Result r = cli(args);
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("sweep: " + kSmall + ": 6 of 6 points") != std::string::npos);
  const auto rows = lines_of(read_text_file(csv));
  REQUIRE(rows.size() == 7);  // header + 3 x 2 points
  CHECK(rows[0] ==
        "point,plan.tp,plan.pp,status,gpus,plan,iteration_s,tokens_per_s,mfu,bubble_share,"
        "peak_memory_gib,fits_memory");
  CHECK(rows[1].rfind("0,2,1,ok,16,tp2 pp1 dp8 ", 0) == 0);
  CHECK(rows[2].rfind("1,2,2,ok,16,tp2 pp2 dp4 ", 0) == 0);
  CHECK(rows[4].rfind("3,4,2,ok,16,tp4 pp2 dp2 ", 0) == 0);
  // tp=3 does not divide the 16 GPUs: those rows say why, and have no numbers.
  CHECK(rows[5].rfind("4,3,1,", 0) == 0);
  CHECK(rows[5].find("tp*pp*cp=3 does not divide the 16 GPUs") != std::string::npos);
  CHECK(rows[5].find(",,,,,,,,") != std::string::npos);

  // Point 3 is the same run as simulate with those overrides.
  const std::string json = temp_path("point3.json");
  REQUIRE(cli({"simulate", kSmall, "--set", "plan.dp=null", "--set", "plan.tp=4", "--set",
               "plan.pp=2", "--json", json})
              .status == 0);
  const auto doc = nlohmann::json::parse(read_text_file(json));
  char expected[64];
  std::snprintf(expected, sizeof expected, ",%.6f,%.1f,", doc["iteration_time_s"].get<double>(),
                doc["tokens_per_s"].get<double>());
  CHECK(rows[4].find(expected) != std::string::npos);

  // The plot: one line per pp value (tp=3 has no point, so each line has 2).
  const std::string picture = read_text_file(svg);
  CHECK(picture.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
  CHECK(count(picture, "<polyline") == 2);
  CHECK(count(picture, "<circle") == 4);
  CHECK(picture.find(">plan.pp=1</text>") != std::string::npos);
}

TEST_CASE("sweep: the CSV is the same bytes on 1 and 3 threads, and shards partition it") {
  const std::string one = temp_path("j1.csv"), three = temp_path("j3.csv");
  auto a = grid_args(one);
  a.insert(a.end(), {"--jobs", "1"});
  auto b = grid_args(three);
  b.insert(b.end(), {"--jobs", "3"});
  REQUIRE(cli(a).status == 0);
  REQUIRE(cli(b).status == 0);
  CHECK(read_text_file(one) == read_text_file(three));

  // Shards 0/2 and 1/2 hold the even and odd points; together, every row once.
  const auto all = lines_of(read_text_file(one));
  std::set<std::string> merged;
  for (const char* shard : {"0/2", "1/2"}) {
    const std::string part = temp_path(std::string("shard") + shard[0] + ".csv");
    auto args = grid_args(part);
    args.insert(args.end(), {"--shard", shard});
    const Result r = cli(args);
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK(r.out.find("3 of 6 points (shard " + std::string(shard) + ")") != std::string::npos);
    const auto rows = lines_of(read_text_file(part));
    REQUIRE(rows.size() == 4);
    CHECK(rows[0] == all[0]);
    merged.insert(rows.begin() + 1, rows.end());
  }
  CHECK(merged == std::set<std::string>(all.begin() + 1, all.end()));
}

TEST_CASE("sweep: bad input is one line, exit 2") {
  const std::string csv = temp_path("bad.csv");
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{"sweep", kSmall, "--grid", "plan.tpp=1,2", "--csv", csv},
       "--grid plan.tpp: not a scenario field: "},
      {{"sweep", kSmall, "--grid", "plan.tp=", "--csv", csv},
       "--grid plan.tp=: empty list of values"},
      {{"sweep", kSmall, "--grid", "plan.tp=1,,2", "--csv", csv}, "empty value in the list"},
      {{"sweep", kSmall, "--grid", "plan.tp=1,2", "--grid", "plan.tp=4", "--csv", csv},
       "--grid plan.tp: given twice"},
      {{"sweep", kSmall, "--grid", "plan.tp=1,2", "--shard", "3/2", "--csv", csv},
       "--shard 3/2: expected I/N with 0 <= I < N, found I=3 N=2"},
      {{"sweep", kSmall, "--grid", "plan.tp=1,2", "--shard", "half", "--csv", csv},
       "--shard half: expected I/N"},
      {{"sweep", kSmall, "--csv", csv}, "--grid is required"},
  };
  for (const auto& c : cases) {
    const Result r = cli(c.args);
    INFO(c.args[3], " -> ", r.err);
    CHECK(r.status == 2);
    CHECK(r.err.find(c.expected) != std::string::npos);
    CHECK(count(r.err, "\n") == 1);
  }
}

TEST_CASE("svg plot: y from 0 to a round maximum, a missing point breaks the line") {
  using namespace parashift::tools;
  LinePlot plot;
  plot.x_ticks = {"8", "16", "32"};
  plot.series = {{"a <b>", {430000.0, std::nullopt, 120000.0}}};
  // Largest 430,000 over 5 ticks: a step of 86,000 rounds up to 100,000, so
  // the axis ends at 500,000.
  CHECK(nice_y_max(plot, 5) == doctest::Approx(500000));
  const PlotArea area;
  CHECK(svg_y(area, 500000, 500000) == doctest::Approx(area.top));
  CHECK(svg_y(area, 0, 500000) == doctest::Approx(area.top + area.height));
  // Category centres: 3 categories over the width, the first at 1/6 of it.
  CHECK(svg_x(area, 0, 3) == doctest::Approx(area.left + area.width / 6));
  std::ostringstream out;
  write_svg(out, plot);
  const std::string svg = out.str();
  CHECK(count(svg, "<polyline") == 2);  // broken at the missing middle point
  CHECK(svg.find("a &lt;b&gt;") != std::string::npos);
  CHECK(svg.find("<b>") == std::string::npos);
  std::ostringstream again;
  write_svg(again, plot);
  CHECK(again.str() == svg);
}

TEST_CASE("sweep --resume keeps the rows a CSV holds and runs only the rest") {
  const std::string full = temp_path("resume-full.csv"), part = temp_path("resume-part.csv");
  REQUIRE(cli(grid_args(full)).status == 0);
  // The same sweep cut short after 4 of its 6 points (header + 4 rows).
  const auto lines = lines_of(read_text_file(full));
  REQUIRE(lines.size() == 7);
  {
    std::ofstream cut(part);
    for (std::size_t i = 0; i < 5; ++i) cut << lines[i] << "\n";
  }
  const Result r = cli(grid_args(part) + std::vector<std::string>{"--resume"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("4 kept from " + part) != std::string::npos);
  CHECK(read_text_file(part) == read_text_file(full));  // the same bytes as one whole run
  // A CSV of another sweep is refused, not overwritten.
  auto other = grid_args(part);
  other[5] = "plan.tp=2,4";
  other.push_back("--resume");
  other.insert(other.begin() + 6, {"--grid", "training.seq_len=2048"});
  const Result bad = cli(other);
  CHECK(bad.status == 2);
  CHECK(bad.err.find("--resume: " + part + ": its header is ") != std::string::npos);
  CHECK(read_text_file(part) == read_text_file(full));
}

TEST_CASE("sweep --random N runs a seeded sample of the grid, in grid order") {
  const std::string a = temp_path("random-a.csv"), b = temp_path("random-b.csv");
  const std::vector<std::string> sample = {"--random", "3", "--seed", "5"};
  const Result r = cli(grid_args(a) + sample);
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("3 of 6 points (a random 3, seed 5)") != std::string::npos);
  REQUIRE(cli(grid_args(b) + sample).status == 0);
  CHECK(read_text_file(a) == read_text_file(b));  // the same seed, the same points
  const auto rows = lines_of(read_text_file(a));
  REQUIRE(rows.size() == 4);
  std::vector<long long> points;
  for (std::size_t i = 1; i < rows.size(); ++i) points.push_back(std::stoll(rows[i]));
  CHECK(std::is_sorted(points.begin(), points.end()));
  CHECK(std::set<long long>(points.begin(), points.end()).size() == 3);
  CHECK(points.back() < 6);
  const Result big = cli(grid_args(a) + std::vector<std::string>{"--random", "7"});
  CHECK(big.status == 2);
  CHECK(big.err.find("--random 7: the grid has 6 points") != std::string::npos);
}

TEST_CASE("sweep --run plan gives the planner's best per point, --json the same rows") {
  const std::string csv = temp_path("plan.csv"), json = temp_path("plan.json");
  const Result r = cli({"sweep", kSmall, "--run", "plan", "--grid", "training.global_batch=32,64",
                        "--csv", csv, "--json", json});
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto rows = lines_of(read_text_file(csv));
  REQUIRE(rows.size() == 3);
  CHECK(rows[0] ==
        "point,training.global_batch,status,gpus,best_plan,iteration_s,tokens_per_s,mfu,"
        "bubble_share,peak_memory_gib,plans_evaluated");
  // Point 0 is the scenario as written: its best is `plan --top 1`'s.
  const std::string plan_json = temp_path("plan-top1.json");
  REQUIRE(cli({"plan", kSmall, "--top", "1", "--json", plan_json}).status == 0);
  const auto top = nlohmann::json::parse(read_text_file(plan_json))["top"][0];
  CHECK(rows[1].rfind("0,32,ok,16," + top["label"].get<std::string>() + ",", 0) == 0);
  const auto doc = nlohmann::json::parse(read_text_file(json));
  REQUIRE(doc.size() == 2);
  CHECK(doc[0]["best_plan"] == top["label"]);
  CHECK(doc[0]["iteration_s"].get<double>() ==
        doctest::Approx(top["iteration_time_s"].get<double>()).epsilon(1e-5));
  CHECK(doc[1]["training.global_batch"] == "64");
}

TEST_CASE("sweep --run faults gives each point's ETTR, a scenario without faults is refused") {
  const std::string csv = temp_path("faults.csv");
  const std::vector<std::string> faults = {"sweep",   kSmall,
                                           "--run",   "faults",
                                           "--seeds", "2",
                                           "--days",  "1",
                                           "--set",   "faults={gpu_mtbf_hours: 100, spares: 8}",
                                           "--grid",  "faults.node_mtbf_hours=200,2000",
                                           "--csv",   csv};
  const Result r = cli(faults);
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto rows = lines_of(read_text_file(csv));
  REQUIRE(rows.size() == 3);
  CHECK(rows[0] ==
        "point,faults.node_mtbf_hours,status,gpus,failures,ettr_p50,ettr_p1,ettr_min,"
        "baseline_ettr_p50,lost_work_p50_s,recovery_p50_s");
  for (std::size_t i = 1; i < rows.size(); ++i) {
    CHECK(rows[i].find(",ok,16,") != std::string::npos);
  }
  CHECK(r.out.find("best ETTR: point ") != std::string::npos);
  const Result none =
      cli({"sweep", kSmall, "--run", "faults", "--grid", "plan.tp=2,4", "--csv", csv});
  CHECK(none.status == 2);
  CHECK(none.err.find("--run faults needs a faults section") != std::string::npos);
  const Result bad = cli({"sweep", kSmall, "--run", "train", "--grid", "plan.tp=2", "--csv", csv});
  CHECK(bad.status == 2);
  CHECK(bad.err.find("--run train: expected simulate, plan or faults") != std::string::npos);
}
