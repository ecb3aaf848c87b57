// A campaign's iteration time follows where the recovery put the ranks:
// a host's ranks on a spare host in another rack (sim::PlanTimes::off_rack_ns).
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "../../tools/cli_harness.hpp"
#include "core/scenario/scenario.hpp"
#include "sim/faults/campaign_setup.hpp"
#include "tests/sim/faults/campaign_fixture.hpp"

namespace fs = std::filesystem;
using namespace parashift;
using parashift::test::read_file;
using parashift::test::run_parashift;
using parashift::test::write_file;

namespace {

// The shared small campaign (32 DGX hosts, racks of 4, 16 spares: spare
// hosts in racks 0 and 4) on leaves of 32 ports, so a leaf group holds 16
// hosts, with leaf uplinks at `oversubscription` : 1.
std::string scenario_text(int oversubscription) {
  std::string text = parashift::test::kScenario;
  const std::string from = "tiers: 2, oversubscription: 1}";
  text.replace(
      text.find(from), from.size(),
      "tiers: 2, oversubscription: " + std::to_string(oversubscription) + ", leaf_radix: 32}");
  return text;
}

}  // namespace

TEST_CASE("a host's ranks on a spare host in another rack: slower only where uplinks are short") {
  // Host 0's ranks (stage 0 of replica 0) moved onto the spare host of rack 4
  // (cabled like host 16, in the other leaf group): its pipeline sends to and
  // from its stage neighbours and its data-parallel ring legs now cross a
  // leaf uplink. Non-blocking, an uplink runs at the NIC's rate and only the
  // extra hops' latency shows (a few microseconds of an 18 s iteration); at
  // 4:1 the uplink runs at a quarter of it and the iteration grows (1.7% when
  // written; the bound is 0.5%).
  for (int over : {1, 4}) {
    CAPTURE(over);
    const fs::path file = write_file("place" + std::to_string(over) + ".yaml", scenario_text(over));
    const core::Scenario s = core::load_scenario(file);
    sim::PlanTimes times(s);
    const double whole = static_cast<double>(times.get(s.plan).iteration_ns);
    const double moved = static_cast<double>(times.off_rack_ns(s.plan));
    if (over == 1) {
      CHECK(moved >= whole);
      CHECK(moved < whole * (1 + 1e-5));
    } else {
      CHECK(moved > whole * 1.005);
    }
  }
}

TEST_CASE("after a host moves to another rack the campaign runs at the moved pace") {
  // One node failure at 3,000 s over 0.2 days (T = 17,280 s), 4:1 uplinks.
  // Host 4 (rack 1) has no spare host in its rack: its ranks move to a spare
  // host in rack 0 or 4, off their rack, and every iteration after the
  // restore takes off_rack_ns. Work done: the 3,000 s before the failure
  // less the lost work, plus the rest after recovery at whole / moved of the
  // healthy pace:
  //   ETTR = (3000 - lost + (T - 3000 - recovery) x whole / moved) / T,
  // within one iteration (whole iterations are counted). Host 0 has a spare
  // host in its own rack (rack 0): it keeps the healthy pace, whole / whole.
  const fs::path file = write_file("moved.yaml", scenario_text(4));
  const core::Scenario s = core::load_scenario(file);
  sim::PlanTimes times(s);
  const double whole = static_cast<double>(times.get(s.plan).iteration_ns);
  const double moved = static_cast<double>(times.off_rack_ns(s.plan));
  const double T = 0.2 * 86'400;
  const fs::path out = file.parent_path() / "moved.json";
  for (int host : {4, 0}) {
    CAPTURE(host);
    const fs::path trace =
        write_file("moved.csv", "time_s,kind,target\n3000,node," + std::to_string(host) + "\n");
    const auto r = run_parashift({"faults", file.string(), "--seeds", "1", "--trace",
                                  trace.string(), "--days", "0.2", "--json", out.string()});
    REQUIRE_MESSAGE(r.status == 0, r.err);
    const auto snap = nlohmann::json::parse(read_file(out))["policies"]["snapshot"];
    REQUIRE(snap["interruptions"] == 1);
    const double lost = snap["lost_work_s"]["max"], recovery = snap["recovery_s"]["max"];
    const double pace = host == 4 ? whole / moved : 1.0;
    const double expected = (3000 - lost + (T - 3000 - recovery) * pace) / T;
    CHECK(std::abs(snap["ettr"]["p50"].get<double>() - expected) < moved * 1e-9 / T);
  }
}
