// Failures a campaign injects: drawn from per-component rates (independent
// Poisson processes), scheduled in the scenario (`fail` events), or replayed
// from a trace file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/faults/fault_config.hpp"
#include "core/units.hpp"
#include "topologies/topology.hpp"

namespace parashift::sim {

using core::TimeNs;

struct FailureEvent {
  TimeNs at_ns = 0;
  core::FailureKind kind = core::FailureKind::Gpu;
  // GPU index (gpu, nic), host index (node, maintenance), link id (link), rack index (rack)
  int target = 0;
  friend bool operator<(const FailureEvent& a, const FailureEvent& b) {
    return a.at_ns != b.at_ns ? a.at_ns < b.at_ns
           : a.kind != b.kind ? a.kind < b.kind
                              : a.target < b.target;
  }
};

/// What can fail: `gpus` GPU slots (each with its NIC), `hosts` hosts,
/// `racks` racks, and the fabric links (switch-to-switch cables, by one of
/// their link ids).
struct FailureTargets {
  int gpus = 0;
  int hosts = 0;
  std::vector<int> fabric_links;
  int racks = 0;
};

/// Switch-to-switch cables of the topology (one link id per cable, the
/// direction with src < dst). Host-side cables fail as NICs.
std::vector<int> fabric_links(const topo::Topology& topology);

/// The seed of a campaign's draw number `index` for a scenario seed: what
/// `faults` draws for its seed `index`, and `simulate` for index 0.
inline std::uint64_t campaign_draw_seed(std::uint64_t scenario_seed, int index) {
  return scenario_seed * 1000003ULL + static_cast<std::uint64_t>(index);
}

/// Failures in [0, horizon) from the config's rates, sorted; a flapping link
/// adds `flaps` downs `period` apart. With rates.repeat_factor m > 1 a GPU,
/// node or NIC that failed fails at m times its rate from then on (drawn
/// exactly: between failures the kind's rate is constant, (count + (m - 1)
/// x failed) / MTBF, and each failure hits a never-failed component or a
/// repeat offender in proportion). Planned maintenance (config.maintenance)
/// takes one host, drawn uniformly, at the cluster's rate. Deterministic for
/// a seed.
std::vector<FailureEvent> draw_failures(const core::FaultConfig& config,
                                        const FailureTargets& targets, std::uint64_t seed,
                                        TimeNs horizon_ns);

/// The config's `fail` events, resolved against the targets (link ids by
/// name in `topology`). A bad id -> InputError naming the event.
std::vector<FailureEvent> scheduled_failures(const core::FaultConfig& config,
                                             const FailureTargets& targets,
                                             const topo::Topology& topology);

/// A CSV trace "time_s,kind,target" (header line required; kind gpu, node,
/// nic or link; target an index, or a link name or id). Any bad row ->
/// InputError "FILE:ROW: ..." with the 1-based line number.
std::vector<FailureEvent> read_failure_trace(const std::string& path, const FailureTargets& targets,
                                             const topo::Topology& topology);

}  // namespace parashift::sim
