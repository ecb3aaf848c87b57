// The progress bar: what it draws, and that it stays silent when stderr is
// no terminal, before its delay, and under --quiet.
#include "tools/cli/progress.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <sstream>
#include <string>

#include "cli_harness.hpp"

using parashift::tools::Progress;

TEST_CASE("the bar fills in fortieths and ends its line") {
  std::ostringstream out;
  {
    Progress bar(out, true, "points", std::chrono::seconds(0));
    bar.update(1, 4);  // 1/4 of 40 columns: 10 filled
    bar.update(4, 4);
  }
  CHECK(out.str() == "\r[" + std::string(10, '#') + std::string(30, ' ') + "] 1/4 points" + "\r[" +
                         std::string(40, '#') + "] 4/4 points\n");
}

TEST_CASE("the bar redraws only when it moves, at most a hundred times a run") {
  std::ostringstream out;
  Progress bar(out, true, "seeds", std::chrono::seconds(0));
  for (int i = 1; i <= 10000; ++i) bar.update(i, 10000);
  bar.finish();
  // A redraw when the filled width moves (40 steps) or the count moved by
  // over 1% (101 per cent-step: every 101st point), and the last: at most
  // 10000 / 101 + 40 + 1 lines, however fast the points come.
  int draws = 0;
  for (char c : out.str()) draws += c == '\r';
  CHECK(draws > 40);
  CHECK(draws <= 10000 / 101 + 41);
}

TEST_CASE("no bar before the delay, when disabled, or on a stream that is no terminal") {
  std::ostringstream late, off;
  {
    Progress bar(late, true, "points", std::chrono::hours(1));
    bar.update(3, 4);
  }
  {
    Progress bar(off, false, "points", std::chrono::seconds(0));
    bar.update(3, 4);
  }
  CHECK(late.str().empty());
  CHECK(off.str().empty());
  std::ostringstream out, err;
  parashift::tools::CliContext ctx{out, err};
  {
    Progress bar(ctx, "points");  // err is a string stream, not the process's stderr
    bar.update(3, 4);
  }
  CHECK(err.str().empty());
}

TEST_CASE("simulate, faults and sweep take --quiet") {
  const std::string src = PARASHIFT_SOURCE_DIR;
  const auto f =
      parashift::test::run_parashift({"faults", src + "/scenarios/faults-llama3-405b-16k.yaml",
                                      "--seeds", "1", "--days", "1", "--quiet"});
  CHECK(f.status == 0);
  const auto s = parashift::test::run_parashift(
      {"sweep", src + "/scenarios/default.yaml", "--set", "plan.dp=null", "--grid", "plan.tp=4,8",
       "--csv", parashift::test::temp_file_path("quiet.csv"), "-q"});
  CHECK(s.status == 0);
  CHECK(s.err.empty());
  const auto sim =
      parashift::test::run_parashift({"simulate", src + "/scenarios/default.yaml", "--quiet"});
  CHECK(sim.status == 0);
  CHECK(sim.err.empty());
}
