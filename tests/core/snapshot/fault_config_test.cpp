#include <doctest/doctest.h>

#include <string>

#include "core/faults/duration.hpp"
#include "core/faults/fault_config.hpp"
#include "core/input_error.hpp"

using namespace parashift::core;

namespace {

FaultConfig read(const std::string& yaml) {
  const YAML::Node root = YAML::Load(yaml);
  YamlFields top(root, "", "s.yaml");
  YamlFields faults = top.map("faults");
  return read_fault_config(faults);
}

std::string error_of(const std::string& yaml) {
  try {
    read(yaml);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("durations are a number and one unit, nothing else") {
  CHECK(parse_strict_duration_ns("30s") == 30 * kNsPerS);
  CHECK(parse_strict_duration_ns("10min") == 600 * kNsPerS);
  CHECK(parse_strict_duration_ns("1.5h") == 5400 * kNsPerS);
  CHECK(parse_strict_duration_ns("250ms") == 250 * kNsPerMs);
  CHECK(parse_strict_duration_ns("2d") == 172800 * kNsPerS);
  for (const char* bad : {"30", "30 s", "-3s", "s", "3hours", "3h ", "1e3s", ""}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_strict_duration_ns(bad), InputError);
  }
  CHECK(format_duration_text(3 * 3600 * kNsPerS) == "3h");
}

TEST_CASE("a full faults section") {
  const FaultConfig c = read(R"(
faults:
  gpu_mtbf_hours: 50000
  node_mtbf_hours: 20000
  heartbeat_timeout: 30s
  spares: 64
  snapshot: {interval: auto, replicas: 3, domain: node}
  baseline: {checkpoint_interval: 3h, storage_gbps: 800, restart: 10min}
  events:
    - {kind: slow, gpu: 17, factor: 1.5, at: 60s, duration: 10min}
    - {kind: degrade, link: "l0->p0", fraction: 0.5, at: 2min}
    - {kind: background, links: ["l0->p0", "l1->p1"], fraction: 0.3}
    - {kind: jitter, sigma: 0.03}
    - {kind: fail, target: node, id: 12, at: 1h}
)");
  CHECK(c.rates.gpu_mtbf_hours == 50000);
  CHECK(c.heartbeat_timeout_ns == 30 * kNsPerS);
  CHECK(c.spares == 64);
  CHECK_FALSE(c.snapshot.interval_ns.has_value());
  CHECK(c.snapshot.interval_where.empty());  // auto: nothing to point at later
  CHECK(c.snapshot.replicas == 3);
  CHECK(c.snapshot.domain == FailureDomain::Node);
  CHECK(c.baseline.checkpoint_interval_ns == 3 * 3600 * kNsPerS);
  // 800 Gb/s = 100 GB/s.
  CHECK(c.baseline.storage_Bps == doctest::Approx(100e9));
  REQUIRE(c.events.size() == 5);
  CHECK(c.events[0].kind == FaultEventKind::Slow);
  CHECK(c.events[0].gpu == 17);
  CHECK(c.events[0].duration_ns == 600 * kNsPerS);
  CHECK(c.events[1].link == "l0->p0");
  CHECK(c.events[2].links.size() == 2);
  CHECK(c.events[3].sigma == doctest::Approx(0.03));
  CHECK(c.events[4].target == FailureKind::Node);
  CHECK(c.events[4].id == "12");
  CHECK(c.events[4].at_ns == 3600 * kNsPerS);
  // 64 GPUs at 50000 h + 8 hosts at 20000 h: 64/50000 + 8/20000 per hour.
  CHECK(c.failures_per_hour(64, 8, 64, 0) == doctest::Approx(0.00128 + 0.0004));
}

TEST_CASE("rack failures and repeat offenders are read, and racks add to the rate") {
  const FaultConfig c = read(
      "faults:\n  rack_mtbf_hours: 4000\n  repeat_factor: 10\n  events:\n"
      "    - {kind: fail, target: rack, id: 2, at: 1h}\n");
  CHECK(c.rates.rack_mtbf_hours == doctest::Approx(4000));
  CHECK(c.rates.repeat_factor == doctest::Approx(10));
  REQUIRE(c.events.size() == 1);
  CHECK(c.events[0].target == FailureKind::Rack);
  // 32 racks at 4000 h each: 32 / 4000 = 0.008 per hour; the repeat factor
  // only adds once parts have failed.
  CHECK(c.failures_per_hour(0, 0, 0, 0, 32) == doctest::Approx(0.008));
  CHECK(read("faults: {}\n").rates.repeat_factor == doctest::Approx(1));
}

TEST_CASE("planned maintenance needs both its rate and its duration") {
  const FaultConfig c = read("faults:\n  maintenance: {every: 27.6h, duration: 4h}\n");
  REQUIRE(c.maintenance.every_ns.has_value());
  CHECK(*c.maintenance.every_ns == static_cast<TimeNs>(27.6 * 3600) * kNsPerS);
  CHECK(c.maintenance.duration_ns == 4 * 3600 * kNsPerS);
  CHECK_FALSE(read("faults: {}\n").maintenance.every_ns.has_value());
  // No published duration, so no default: leaving it out is an error.
  const std::string e1 = error_of("faults:\n  maintenance: {every: 27.6h}\n");
  CHECK(e1.find("faults.maintenance.duration") != std::string::npos);
  CHECK(e1.find("missing") != std::string::npos);
  const std::string e2 = error_of("faults:\n  maintenance: {every: 0s, duration: 1h}\n");
  CHECK(e2.find("faults.maintenance.every") != std::string::npos);
  const std::string e3 = error_of("faults:\n  maintenance: {every: 1h, duration: 1h, hosts: 2}\n");
  CHECK(e3.find("faults.maintenance.hosts") != std::string::npos);
}

TEST_CASE("faults.replace: a failed GPU takes its host (default) or itself") {
  CHECK(read("faults: {}\n").replace_host);
  CHECK_FALSE(read("faults: {replace: gpu}\n").replace_host);
  const std::string e = error_of("faults: {replace: rack}\n");
  CHECK(e.find("faults.replace: expected host or gpu, found 'rack'") != std::string::npos);
}

TEST_CASE("fail-slow episodes need their rate, factor and mean duration") {
  const FaultConfig c =
      read("faults:\n  fail_slow: {gpu_mtbf_hours: 98688, factor: 1.5, duration: 1h}\n");
  CHECK(c.fail_slow.gpu_mtbf_hours == doctest::Approx(98688));
  CHECK(c.fail_slow.factor == doctest::Approx(1.5));
  CHECK(c.fail_slow.duration_ns == 3600 * kNsPerS);
  CHECK(read("faults: {}\n").fail_slow.gpu_mtbf_hours == 0);
  // No published per-GPU rate, so no defaults: each field is required.
  const std::string e1 = error_of("faults:\n  fail_slow: {gpu_mtbf_hours: 100, factor: 2}\n");
  CHECK(e1.find("faults.fail_slow.duration: missing; expected a mean duration > 0") !=
        std::string::npos);
  const std::string e2 =
      error_of("faults:\n  fail_slow: {gpu_mtbf_hours: 100, factor: 1, duration: 1h}\n");
  CHECK(e2.find("faults.fail_slow.factor") != std::string::npos);
  CHECK(e2.find("a slowdown factor > 1") != std::string::npos);
  const std::string e3 =
      error_of("faults:\n  fail_slow: {gpu_mtbf_hours: 0, factor: 2, duration: 1h}\n");
  CHECK(e3.find("faults.fail_slow.gpu_mtbf_hours") != std::string::npos);
  const std::string e4 =
      error_of("faults:\n  fail_slow: {gpu_mtbf_hours: 1, factor: 2, duration: 1h, gpus: [1]}\n");
  CHECK(e4.find("faults.fail_slow.gpus") != std::string::npos);
}

TEST_CASE("the baseline's checkpoint interval defaults to 30 min with or without its section") {
  // It was Young/Daly's "auto" (4.5-6 min on the shipped campaign) without a
  // baseline: section and 30 min with one that left the field out.
  const TimeNs half_hour = 1800 * kNsPerS;
  CHECK(read("faults: {gpu_mtbf_hours: 1000}\n").baseline.checkpoint_interval_ns == half_hour);
  CHECK(read("faults: {baseline: {}}\n").baseline.checkpoint_interval_ns == half_hour);
  CHECK(read("faults: {baseline: {storage_gbps: 100}}\n").baseline.checkpoint_interval_ns ==
        half_hour);
  CHECK_FALSE(read("faults: {baseline: {checkpoint_interval: auto}}\n")
                  .baseline.checkpoint_interval_ns.has_value());
}

TEST_CASE("a fixed snapshot interval remembers where it was written") {
  // The cadence is checked against it once iteration and replication times
  // are known (sim/faults/campaign_setup.cpp); the message points here.
  const FaultConfig c = read("faults:\n  snapshot:\n    interval: 90s\n");
  CHECK(c.snapshot.interval_ns == 90 * kNsPerS);
  CHECK(c.snapshot.interval_where.find("s.yaml:3:") != std::string::npos);
  CHECK(c.snapshot.interval_where.find("faults.snapshot.interval") != std::string::npos);
}

TEST_CASE("bad fault config values name the file, line and field") {
  const std::string e1 = error_of("faults:\n  heartbeat_timeout: 30\n");
  CHECK(e1.find("s.yaml:2:") != std::string::npos);
  CHECK(e1.find("faults.heartbeat_timeout") != std::string::npos);
  CHECK(e1.find("expected a duration") != std::string::npos);

  const std::string e2 = error_of("faults:\n  spares: 4\n  sparez: 4\n");
  CHECK(e2.find("faults.sparez: unknown field") != std::string::npos);

  const std::string e3 = error_of("faults:\n  snapshot: {domain: pod}\n");
  CHECK(e3.find("faults.snapshot.domain") != std::string::npos);

  const std::string e4 = error_of("faults:\n  events:\n    - {kind: slow, gpu: 3, factor: 0.5}\n");
  CHECK(e4.find("faults.events[0].factor") != std::string::npos);
  CHECK(e4.find("s.yaml:3:") != std::string::npos);

  const std::string e5 =
      error_of("faults:\n  events:\n    - {kind: fail, target: switch, id: 1, at: 1h}\n");
  CHECK(e5.find("faults.events[0].target") != std::string::npos);
  CHECK(e5.find("gpu, node, nic, link, rack") != std::string::npos);
  // A repeat factor below 1 would make a failed part more reliable than a new one.
  const std::string e6r = error_of("faults:\n  repeat_factor: 0.5\n");
  CHECK(e6r.find("faults.repeat_factor") != std::string::npos);
  CHECK(e6r.find("a factor >= 1") != std::string::npos);

  // A slow event names one GPU or one node (a whole host), not both, not neither.
  const std::string e7 =
      error_of("faults:\n  events:\n    - {kind: slow, gpu: 3, node: 1, factor: 2}\n");
  CHECK(e7.find("faults.events[0].node") != std::string::npos);
  CHECK(e7.find("expected one of gpu (a GPU index) or node") != std::string::npos);
  const std::string e8 = error_of("faults:\n  events:\n    - {kind: slow, factor: 2}\n");
  CHECK(e8.find("faults.events[0].gpu") != std::string::npos);
  CHECK(read("faults:\n  events:\n    - {kind: slow, node: 5, factor: 2}\n").events[0].node == 5);

  const std::string e6 = error_of("faults:\n  events:\n    - {kind: melt}\n");
  CHECK(e6.find("expected one of slow, degrade, background, tenant, jitter, fail") !=
        std::string::npos);
}
