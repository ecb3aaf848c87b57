// The scenario's `traffic:` section (core/traffic_class.hpp) and the tenant
// event that needs it.
#include <doctest/doctest.h>

#include <string>

#include "core/input_error.hpp"
#include "core/scenario/scenario.hpp"

using namespace parashift::core;

namespace {
const std::string kBase = R"(
model: {preset: llama2-7b, layers: 16}
cluster:
  device: a100-80gb
  topology: {generator: rail-fat-tree, node: dgx-a100, nodes: 2, tiers: 2}
training: {global_batch: 64, seq_len: 2048}
plan: {tp: 2, pp: 2}
)";
const std::string kFile = std::string(PARASHIFT_SOURCE_DIR) + "/scenarios/x.yaml";
}  // namespace

TEST_CASE("traffic: weights per class, every other class at 1") {
  CHECK(parse_scenario(kBase, kFile).traffic.is_default());
  const Scenario s = parse_scenario(kBase + "traffic: {grad_sync: 8, tenant: 0.5}\n", kFile);
  CHECK(s.traffic.of(TrafficClass::GradSync) == 8);
  CHECK(s.traffic.of(TrafficClass::Tenant) == 0.5);
  CHECK(s.traffic.of(TrafficClass::Pipeline) == 1);
  CHECK(s.traffic.describe() == "grad_sync 8, tenant 0.5");
}

TEST_CASE("traffic: an unknown class or a weight out of range is named") {
  CHECK_THROWS_WITH_AS(parse_scenario(kBase + "traffic: {gradsync: 8}\n", kFile),
                       doctest::Contains("traffic.gradsync"), InputError);
  CHECK_THROWS_WITH_AS(parse_scenario(kBase + "traffic: {tenant: 0}\n", kFile),
                       doctest::Contains("traffic.tenant: expected a positive number, found '0'"),
                       InputError);
  CHECK_THROWS_WITH_AS(parse_scenario(kBase + "traffic: {tenant: 5000}\n", kFile),
                       doctest::Contains("traffic.tenant: expected a weight in [0.001, 1000], "
                                         "found '5000'"),
                       InputError);
  CHECK_THROWS_WITH_AS(parse_scenario(kBase + "traffic: {snapshot: .nan}\n", kFile),
                       doctest::Contains("traffic.snapshot"), InputError);
  CHECK_THROWS_WITH_AS(parse_scenario(kBase + "traffic: [1, 2]\n", kFile),
                       doctest::Contains("traffic"), InputError);
}

TEST_CASE("a tenant event is read with its links, and needs the max-min network") {
  const std::string tenant =
      "faults:\n  events:\n    - {kind: tenant, links: [a, b], at: 1s, duration: 2s}\n";
  const Scenario s = parse_scenario(kBase + tenant, kFile);
  REQUIRE(s.faults);
  REQUIRE(s.faults->events.size() == 1);
  CHECK(s.faults->events[0].kind == FaultEventKind::Tenant);
  CHECK(s.faults->events[0].links == std::vector<std::string>{"a", "b"});
  CHECK(s.faults->events[0].at_ns == 1'000'000'000);
  CHECK_THROWS_WITH_AS(parse_scenario(kBase + tenant + "run: {network: path}\n", kFile),
                       doctest::Contains("faults.events[0]: a tenant shares links by flows; "
                                         "expected run.network: maxmin, found path"),
                       InputError);
  CHECK_THROWS_WITH_AS(
      parse_scenario(
          kBase + "faults:\n  events:\n    - {kind: tenant, links: [a], fraction: 0.5}\n", kFile),
      doctest::Contains("fraction"), InputError);
}
