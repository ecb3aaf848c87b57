#include "core/faults/fault_config.hpp"

#include <cmath>

#include "core/faults/duration.hpp"
#include "core/input_error.hpp"
#include "core/snapshot/interval.hpp"

namespace parashift::core {

const char* to_string(FailureKind kind) {
  switch (kind) {
    case FailureKind::Gpu:
      return "gpu";
    case FailureKind::Node:
      return "node";
    case FailureKind::Nic:
      return "nic";
    case FailureKind::Link:
      return "link";
    case FailureKind::Rack:
      return "rack";
    case FailureKind::Maintenance:
      return "maintenance";
  }
  return "?";
}

FailureKind parse_failure_kind(const std::string& text) {
  if (text == "gpu") return FailureKind::Gpu;
  if (text == "node") return FailureKind::Node;
  if (text == "nic") return FailureKind::Nic;
  if (text == "link") return FailureKind::Link;
  if (text == "rack") return FailureKind::Rack;
  if (text == "maintenance") return FailureKind::Maintenance;
  throw InputError("expected one of gpu, node, nic, link, rack, maintenance, found '" + text + "'");
}

const char* to_string(FailureDomain domain) {
  return domain == FailureDomain::Node ? "node" : "rack";
}

const char* to_string(FaultEventKind kind) {
  switch (kind) {
    case FaultEventKind::Slow:
      return "slow";
    case FaultEventKind::Degrade:
      return "degrade";
    case FaultEventKind::Background:
      return "background";
    case FaultEventKind::Tenant:
      return "tenant";
    case FaultEventKind::Jitter:
      return "jitter";
    case FaultEventKind::Fail:
      return "fail";
    case FaultEventKind::Kill:
      return "kill";
  }
  return "?";
}

double FaultConfig::failures_per_hour(int gpus, int hosts, int nics, int links, int racks) const {
  auto rate = [](double mtbf_hours, int count) {
    return mtbf_hours > 0 ? count / mtbf_hours : 0.0;
  };
  return rate(rates.gpu_mtbf_hours, gpus) + rate(rates.node_mtbf_hours, hosts) +
         rate(rates.nic_mtbf_hours, nics) + rate(rates.link_mtbf_hours, links) +
         rate(rates.rack_mtbf_hours, racks);
}

namespace {

double number(YamlFields& f, const std::string& key, double lo, double hi, bool lo_open,
              const std::string& expected) {
  const YAML::Node node = f.child(key);
  double value = 0;
  if (!node.IsScalar() || !YAML::convert<double>::decode(node, value) || !std::isfinite(value) ||
      value < lo || value > hi || (lo_open && value == lo)) {
    f.fail(key, "expected " + expected + ", found '" +
                    (node.IsScalar() ? node.Scalar()
                                     : "a " + std::string(node.IsMap() ? "map" : "list")) +
                    "'");
  }
  return value;
}

double optional_number(YamlFields& f, const std::string& key, double fallback, double lo, double hi,
                       bool lo_open, const std::string& expected) {
  if (!f.has(key)) {
    f.allow(key);
    return fallback;
  }
  return number(f, key, lo, hi, lo_open, expected);
}

TimeNs duration(YamlFields& f, const std::string& key) {
  const std::string text = f.string(key);
  try {
    return parse_strict_duration_ns(text);
  } catch (const InputError& e) {
    f.fail(key, e.what());
  }
}

TimeNs optional_duration(YamlFields& f, const std::string& key, TimeNs fallback) {
  if (!f.has(key)) {
    f.allow(key);
    return fallback;
  }
  return duration(f, key);
}

// "auto" or a duration.
std::optional<TimeNs> interval(YamlFields& f, const std::string& key,
                               std::optional<TimeNs> fallback) {
  if (!f.has(key)) {
    f.allow(key);
    return fallback;
  }
  const std::string text = f.string(key);
  if (text == "auto") return std::nullopt;
  try {
    const TimeNs t = parse_strict_duration_ns(text);
    if (t <= 0) throw InputError("must be > 0");
    return t;
  } catch (const InputError& e) {
    f.fail(key, std::string("expected auto or a duration > 0; ") + e.what());
  }
}

int nonnegative_int(YamlFields& f, const std::string& key, int fallback) {
  const long long v = f.nonnegative_int64(key, fallback);
  if (v > 1'000'000'000) f.fail(key, "expected at most 1e9, found " + std::to_string(v));
  return static_cast<int>(v);
}

SnapshotConfig read_snapshot(YamlFields& f) {
  SnapshotConfig s;
  s.interval_ns = interval(f, "interval", std::nullopt);
  if (s.interval_ns) s.interval_where = f.where("interval");
  s.replicas = f.optional_positive_int("replicas").value_or(s.replicas);
  if (s.replicas < 2) f.fail("replicas", "expected >= 2 (the owner's host and at least one peer)");
  if (auto d = f.optional_string("domain")) {
    if (*d == "node") {
      s.domain = FailureDomain::Node;
    } else if (*d == "rack") {
      s.domain = FailureDomain::Rack;
    } else {
      f.fail("domain", "expected node or rack, found '" + *d + "'");
    }
  }
  s.keep_versions = f.optional_positive_int("keep_versions").value_or(s.keep_versions);
  s.host_copy_Bps = gbps(optional_number(f, "host_copy_gbps", s.host_copy_Bps * 8 / 1e9, 0, 1e9,
                                         true, "a number of Gb/s > 0"));
  s.every = nonnegative_int(f, "every", 0);
  s.overlap = f.optional_bool("overlap").value_or(s.overlap);
  f.reject_unknown();
  return s;
}

BaselineConfig read_baseline(YamlFields& f) {
  BaselineConfig b;
  b.checkpoint_interval_ns = interval(f, "checkpoint_interval", b.checkpoint_interval_ns);
  b.storage_Bps = gbps(optional_number(f, "storage_gbps", b.storage_Bps * 8 / 1e9, 0, 1e12, true,
                                       "a number of Gb/s > 0"));
  b.restart_ns = optional_duration(f, "restart", b.restart_ns);
  f.reject_unknown();
  return b;
}

FaultEvent read_event(YamlFields& f, const std::string& where) {
  FaultEvent e;
  e.where = where;
  const std::string kind = f.string("kind");
  auto at = [&] { e.at_ns = optional_duration(f, "at", 0); };
  auto span = [&] {
    if (f.has("duration")) {
      e.duration_ns = duration(f, "duration");
      if (*e.duration_ns <= 0) f.fail("duration", "expected a duration > 0");
    } else {
      f.allow("duration");
    }
  };
  if (kind == "slow") {
    e.kind = FaultEventKind::Slow;
    if (f.has("gpu") == f.has("node"))
      f.fail(f.has("gpu") ? "node" : "gpu",
             "expected one of gpu (a GPU index) or node (a host index, all its GPUs)");
    e.gpu = nonnegative_int(f, "gpu", -1);
    e.node = nonnegative_int(f, "node", -1);
    e.factor = number(f, "factor", 1, 1e6, false, "a slowdown factor >= 1");
    at();
    span();
  } else if (kind == "degrade") {
    e.kind = FaultEventKind::Degrade;
    if (f.has("scope") == f.has("link"))
      f.fail(f.has("scope") ? "scope" : "link",
             "expected one of link (a link name) or scope (inter_node or intra_node)");
    if (f.has("scope")) {
      e.scope = f.string("scope");
      if (e.scope != "inter_node" && e.scope != "intra_node")
        f.fail("scope", "expected inter_node or intra_node, found '" + e.scope + "'");
    } else {
      e.link = f.string("link");
    }
    e.fraction = number(f, "fraction", 0, 1, true, "a share of bandwidth left in (0, 1]");
    at();
    span();
  } else if (kind == "background" || kind == "tenant") {
    e.kind = kind == "tenant" ? FaultEventKind::Tenant : FaultEventKind::Background;
    const YAML::Node links = f.child("links");
    if (!links.IsSequence() || links.size() == 0)
      f.fail("links", "expected a non-empty list of link names");
    for (const auto& l : links) {
      if (!l.IsScalar()) f.fail("links", "expected link names (strings)");
      e.links.push_back(l.Scalar());
    }
    if (e.kind == FaultEventKind::Background) {
      e.fraction = number(f, "fraction", 0, 1, false, "a share of bandwidth taken in [0, 1)");
      if (e.fraction >= 1) f.fail("fraction", "expected a share of bandwidth taken in [0, 1)");
    }
    at();
    span();
  } else if (kind == "jitter") {
    e.kind = FaultEventKind::Jitter;
    e.sigma = number(f, "sigma", 0, 10, false, "a relative standard deviation >= 0");
  } else if (kind == "fail") {
    e.kind = FaultEventKind::Fail;
    const std::string target = f.string("target");
    try {
      e.target = parse_failure_kind(target);
    } catch (const InputError& err) {
      f.fail("target", err.what());
    }
    e.id = f.string("id");
    if (e.target != FailureKind::Link) {
      try {
        std::size_t used = 0;
        const long long v = std::stoll(e.id, &used);
        if (used != e.id.size() || v < 0) throw InputError("");
      } catch (const std::exception&) {
        f.fail("id", "expected a non-negative " + target + " index, found '" + e.id + "'");
      }
    }
    e.at_ns = duration(f, "at");
  } else if (kind == "kill") {
    e.kind = FaultEventKind::Kill;
    if (!f.has("rank")) f.fail("rank", "missing; expected a rank index");
    e.rank = nonnegative_int(f, "rank", -1);
    if (!f.has("at_iteration")) f.fail("at_iteration", "missing; expected an iteration index");
    e.at_iteration = f.nonnegative_int64("at_iteration", 0);
    e.rank_where = f.where("rank");
  } else {
    f.fail("kind",
           "expected one of slow, degrade, background, tenant, jitter, fail, kill, found '" + kind +
               "'");
  }
  f.reject_unknown();
  return e;
}

}  // namespace

FaultConfig read_fault_config(YamlFields& f) {
  FaultConfig c;
  const std::string mtbf = "a number of hours > 0";
  c.rates.gpu_mtbf_hours = optional_number(f, "gpu_mtbf_hours", 0, 0, 1e12, true, mtbf);
  c.rates.node_mtbf_hours = optional_number(f, "node_mtbf_hours", 0, 0, 1e12, true, mtbf);
  c.rates.nic_mtbf_hours = optional_number(f, "nic_mtbf_hours", 0, 0, 1e12, true, mtbf);
  c.rates.link_mtbf_hours = optional_number(f, "link_mtbf_hours", 0, 0, 1e12, true, mtbf);
  c.rates.rack_mtbf_hours = optional_number(f, "rack_mtbf_hours", 0, 0, 1e12, true, mtbf);
  c.rates.repeat_factor =
      optional_number(f, "repeat_factor", 1, 1, 1e6, false, "a factor >= 1 (1: independent)");
  if (f.has("link_flap")) {
    YamlFields flap = f.map("link_flap");
    c.flap.probability =
        optional_number(flap, "probability", 0, 0, 1, false, "a probability in [0, 1]");
    c.flap.flaps = flap.optional_positive_int("flaps").value_or(c.flap.flaps);
    c.flap.period_ns = optional_duration(flap, "period", c.flap.period_ns);
    flap.reject_unknown();
  } else {
    f.allow("link_flap");
  }
  c.heartbeat_timeout_ns = optional_duration(f, "heartbeat_timeout", c.heartbeat_timeout_ns);
  c.reinit_ns = optional_duration(f, "reinit", c.reinit_ns);
  c.repair_ns = optional_duration(f, "repair", c.repair_ns);
  c.spares = nonnegative_int(f, "spares", 0);
  if (f.has("max_restarts")) c.max_restarts = nonnegative_int(f, "max_restarts", 0);
  if (auto unit = f.optional_string("replace")) {
    if (*unit != "host" && *unit != "gpu")
      f.fail("replace", "expected host or gpu, found '" + *unit + "'");
    c.replace_host = *unit == "host";
  }
  c.hosts_per_rack = f.optional_positive_int("hosts_per_rack");
  c.days = optional_number(f, "days", c.days, 0, 3650, true, "a number of days in (0, 3650]");
  if (f.has("maintenance")) {
    YamlFields m = f.map("maintenance");
    auto positive = [&m](const char* key) {
      if (!m.has(key)) m.fail(key, "missing; expected a duration > 0");
      const TimeNs value = duration(m, key);
      if (value <= 0) m.fail(key, "expected a duration > 0");
      return value;
    };
    c.maintenance.every_ns = positive("every");
    c.maintenance.duration_ns = positive("duration");
    m.reject_unknown();
  } else {
    f.allow("maintenance");
  }
  if (f.has("fail_slow")) {
    YamlFields m = f.map("fail_slow");
    auto required = [&m](const char* key, const char* expected) {
      if (!m.has(key)) m.fail(key, std::string("missing; expected ") + expected);
    };
    required("gpu_mtbf_hours", "a number of hours > 0");
    required("factor", "a slowdown factor > 1");
    required("duration", "a mean duration > 0");
    c.fail_slow.gpu_mtbf_hours =
        number(m, "gpu_mtbf_hours", 0, 1e12, true, "a number of hours > 0");
    c.fail_slow.factor = number(m, "factor", 1, 1e6, true, "a slowdown factor > 1");
    c.fail_slow.duration_ns = duration(m, "duration");
    if (c.fail_slow.duration_ns <= 0) m.fail("duration", "expected a mean duration > 0");
    m.reject_unknown();
  } else {
    f.allow("fail_slow");
  }
  if (f.has("snapshot")) {
    YamlFields s = f.map("snapshot");
    c.snapshot = read_snapshot(s);
  } else {
    f.allow("snapshot");
  }
  if (f.has("baseline")) {
    YamlFields b = f.map("baseline");
    c.baseline = read_baseline(b);
  } else {
    f.allow("baseline");
  }
  if (f.has("events")) {
    const YAML::Node events = f.child("events");
    if (!events.IsSequence()) f.fail("events", "expected a list of events");
    std::size_t i = 0;
    for (const auto& element : events) {
      YamlFields ef = f.item("events", element, i);
      c.events.push_back(read_event(ef, f.where_item("events", element, i)));
      ++i;
    }
  } else {
    f.allow("events");
  }
  c.spares_where = f.where("spares");
  f.reject_unknown();
  return c;
}

void check_fault_targets(const FaultConfig& faults, int ranks, int gpus) {
  if (faults.spares > gpus)
    throw InputError(faults.spares_where + ": " + std::to_string(faults.spares) +
                     " spares, but the cluster has " + std::to_string(gpus) +
                     " GPUs; expected at most " + std::to_string(gpus));
  for (const FaultEvent& e : faults.events)
    if (e.kind == FaultEventKind::Kill && e.rank >= ranks)
      throw InputError(e.rank_where + ": rank " + std::to_string(e.rank) +
                       " does not exist; expected a rank in 0.." + std::to_string(ranks - 1));
}

double checkpoint_interval_s(const BaselineConfig& baseline, double write_s, double mtbf_s) {
  return baseline.checkpoint_interval_ns ? ns_to_s(*baseline.checkpoint_interval_ns)
                                         : daly_interval_s(write_s, mtbf_s);
}

}  // namespace parashift::core
