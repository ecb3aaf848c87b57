#include "sim/faults/failure_events.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>
#include <sstream>

#include "core/input_error.hpp"

namespace parashift::sim {

namespace {

bool is_switch(topo::NodeKind k) {
  return k == topo::NodeKind::Leaf || k == topo::NodeKind::Spine || k == topo::NodeKind::Core ||
         k == topo::NodeKind::Router;
}

// Parses a whole non-negative integer; false otherwise.
bool parse_index(const std::string& text, long long& out) {
  if (text.empty() || text.size() > 12) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  out = std::stoll(text);
  return true;
}

// Resolves a target of `kind`; returns an error message or "".
std::string resolve(core::FailureKind kind, const std::string& text, const FailureTargets& t,
                    const topo::Topology& topology, int& out) {
  if (kind == core::FailureKind::Link) {
    long long id = 0;
    if (parse_index(text, id) && id < topology.link_count()) {
      out = static_cast<int>(id);
      return "";
    }
    for (int e = 0; e < topology.link_count(); ++e) {
      if (topology.link(e).name == text) {
        out = e;
        return "";
      }
    }
    return "unknown link '" + text + "' (expected a link name such as '" +
           (topology.link_count() > 0 ? topology.link(0).name : std::string("a->b")) +
           "' or a link id)";
  }
  const int limit = kind == core::FailureKind::Node || kind == core::FailureKind::Maintenance
                        ? t.hosts
                    : kind == core::FailureKind::Rack ? t.racks
                                                      : t.gpus;
  long long id = 0;
  if (!parse_index(text, id) || id >= limit) {
    return std::string("expected a ") + core::to_string(kind) + " index in [0, " +
           std::to_string(limit) + "), found '" + text + "'";
  }
  out = static_cast<int>(id);
  return "";
}

}  // namespace

std::vector<int> fabric_links(const topo::Topology& topology) {
  std::vector<int> out;
  for (int e = 0; e < topology.link_count(); ++e) {
    const auto& l = topology.link(e);
    if (l.src < l.dst && is_switch(topology.node(l.src).kind) &&
        is_switch(topology.node(l.dst).kind)) {
      out.push_back(e);
    }
  }
  return out;
}

std::vector<FailureEvent> draw_failures(const core::FaultConfig& config,
                                        const FailureTargets& targets, std::uint64_t seed,
                                        TimeNs horizon_ns) {
  std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ULL + 0x51ed27);
  struct Source {
    core::FailureKind kind;
    int count;
    double mtbf_hours;
  };
  const std::vector<Source> sources = {
      {core::FailureKind::Gpu, targets.gpus, config.rates.gpu_mtbf_hours},
      {core::FailureKind::Node, targets.hosts, config.rates.node_mtbf_hours},
      {core::FailureKind::Nic, targets.gpus, config.rates.nic_mtbf_hours},
      {core::FailureKind::Link, static_cast<int>(targets.fabric_links.size()),
       config.rates.link_mtbf_hours},
      {core::FailureKind::Rack, targets.racks, config.rates.rack_mtbf_hours},
  };
  std::vector<FailureEvent> out;
  const double horizon_s = core::ns_to_s(horizon_ns);
  for (const Source& s : sources) {
    if (s.mtbf_hours <= 0 || s.count <= 0) continue;
    // The union of `count` independent components: one Poisson process of
    // rate count / MTBF; each failure hits a uniformly drawn component.
    // Repeat offenders add (m - 1) / MTBF each once they have failed.
    const bool repeats = config.rates.repeat_factor > 1 && s.kind != core::FailureKind::Link &&
                         s.kind != core::FailureKind::Rack;
    const double base_per_s = s.count / (s.mtbf_hours * 3600.0);
    const double extra_per_s = (config.rates.repeat_factor - 1) / (s.mtbf_hours * 3600.0);
    std::vector<int> offenders;  // components that have failed, in order of first failure
    std::vector<char> failed(repeats ? static_cast<std::size_t>(s.count) : 0, 0);
    std::uniform_int_distribution<int> pick(0, s.count - 1);
    std::bernoulli_distribution flaps(config.flap.probability);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    auto rate = [&] { return base_per_s + extra_per_s * static_cast<double>(offenders.size()); };
    for (double t = std::exponential_distribution<double>(rate())(rng); t < horizon_s;
         t += std::exponential_distribution<double>(rate())(rng)) {
      int target = -1;
      if (repeats && !offenders.empty() && unit(rng) * rate() >= base_per_s) {
        // An offender's extra rate: uniformly among the components that failed.
        std::uniform_int_distribution<std::size_t> which(0, offenders.size() - 1);
        target = offenders[which(rng)];
      } else {
        target = pick(rng);
      }
      if (repeats && !failed[static_cast<std::size_t>(target)]) {
        failed[static_cast<std::size_t>(target)] = 1;
        offenders.push_back(target);
      }
      FailureEvent e{core::seconds_to_ns(t), s.kind, target};
      if (s.kind == core::FailureKind::Link) {
        e.target = targets.fabric_links[static_cast<std::size_t>(e.target)];
        const int downs = config.flap.probability > 0 && flaps(rng) ? config.flap.flaps : 1;
        for (int i = 1; i < downs; ++i) {
          const TimeNs at = e.at_ns + i * config.flap.period_ns;
          if (at < horizon_ns) out.push_back(FailureEvent{at, e.kind, e.target});
        }
      }
      out.push_back(e);
    }
  }
  // Planned maintenance: one host at a time, uniformly, at the cluster's rate.
  if (config.maintenance.every_ns && targets.hosts > 0) {
    std::exponential_distribution<double> gap(1.0 / core::ns_to_s(*config.maintenance.every_ns));
    std::uniform_int_distribution<int> host(0, targets.hosts - 1);
    for (double t = gap(rng); t < horizon_s; t += gap(rng)) {
      out.push_back(
          FailureEvent{core::seconds_to_ns(t), core::FailureKind::Maintenance, host(rng)});
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<FailureEvent> scheduled_failures(const core::FaultConfig& config,
                                             const FailureTargets& targets,
                                             const topo::Topology& topology) {
  std::vector<FailureEvent> out;
  for (const auto& e : config.events) {
    if (e.kind != core::FaultEventKind::Fail) continue;
    FailureEvent f{e.at_ns, e.target, 0};
    const std::string error = resolve(e.target, e.id, targets, topology, f.target);
    if (!error.empty()) throw core::InputError(e.where + ".id: " + error);
    out.push_back(f);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<FailureEvent> read_failure_trace(const std::string& path, const FailureTargets& targets,
                                             const topo::Topology& topology) {
  std::ifstream in(path);
  if (!in) throw core::InputError(path + ": cannot open failure trace");
  std::vector<FailureEvent> out;
  std::string line;
  int row = 0;
  auto fail = [&](const std::string& what) {
    throw core::InputError(path + ":" + std::to_string(row) + ": " + what);
  };
  while (std::getline(in, line)) {
    ++row;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (row == 1) {
      if (line != "time_s,kind,target")
        fail("expected the header 'time_s,kind,target', found '" + line + "'");
      continue;
    }
    if (line.empty()) continue;
    std::vector<std::string> cells;
    std::stringstream split(line);
    for (std::string cell; std::getline(split, cell, ',');) cells.push_back(cell);
    if (cells.size() != 3)
      fail("expected 3 fields time_s,kind,target, found " + std::to_string(cells.size()));
    double t = 0;
    std::size_t used = 0;
    try {
      t = std::stod(cells[0], &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != cells[0].size() || !std::isfinite(t) || t < 0) {
      fail("time_s: expected a non-negative number of seconds, found '" + cells[0] + "'");
    }
    FailureEvent e{core::seconds_to_ns(t), core::FailureKind::Gpu, 0};
    try {
      e.kind = core::parse_failure_kind(cells[1]);
    } catch (const core::InputError& err) {
      fail(std::string("kind: ") + err.what());
    }
    const std::string error = resolve(e.kind, cells[2], targets, topology, e.target);
    if (!error.empty()) fail("target: " + error);
    out.push_back(e);
  }
  if (row == 0) fail("empty trace; expected the header 'time_s,kind,target'");
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace parashift::sim
