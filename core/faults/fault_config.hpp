// The `faults:` section of a scenario: random failure rates, detection and
// recovery knobs, the spares pool, the snapshot policy and the baseline
// (remote checkpoints + full restart), and scheduled events (slowdowns for
// the straggler work, failures at fixed times). Data only: read and
// validated here, used by sim/faults and the policy.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/scenario/yaml_fields.hpp"
#include "core/units.hpp"

namespace parashift::core {

/// Rack: a leaf switch or power-domain failure; every host of the rack is down
/// at once, its memory with it, until repaired. Maintenance: a host taken out
/// for planned work, announced, for `maintenance.duration`.
enum class FailureKind { Gpu, Node, Nic, Link, Rack, Maintenance };
const char* to_string(FailureKind kind);
/// "gpu", "node", "nic", "link", "rack", "maintenance" (a host); throws InputError listing them
/// otherwise.
FailureKind parse_failure_kind(const std::string& text);

/// Where snapshot replicas go: another node, or a node in another rack.
enum class FailureDomain { Node, Rack };
const char* to_string(FailureDomain domain);

/// Mean time between failures of ONE component, in hours; 0 = never fails.
struct FailureRates {
  double gpu_mtbf_hours = 0;   // per GPU
  double node_mtbf_hours = 0;  // per host (whole node: GPUs and host memory)
  double nic_mtbf_hours = 0;   // per NIC (one NIC per GPU)
  double link_mtbf_hours = 0;  // per switch-to-switch cable
  double rack_mtbf_hours = 0;  // per rack (leaf switch or power domain)
  /// Repeat offenders: a GPU, node or NIC that has failed fails again at this
  /// multiple of its rate from then on (1: independent failures).
  double repeat_factor = 1;
};

/// A failed link may flap: go down `flaps` times, `period_ns` apart.
struct LinkFlap {
  double probability = 0;  // share of link failures that flap, [0, 1]
  int flaps = 3;
  TimeNs period_ns = 60 * kNsPerS;
};

/// Planned maintenance: one host at a time, announced, so a job can save its
/// state first. nullopt every: none.
struct MaintenanceConfig {
  std::optional<TimeNs> every_ns;  // mean time between events over the cluster (Poisson)
  TimeNs duration_ns = 0;          // the host out of service; required with every
};

/// Fail-slow episodes (a GPU computing `factor` times slower for a while:
/// thermal throttling, a degraded part; FALCON, Wu et al. 2024, sees them
/// last from tens of seconds to nearly ten hours): each GPU starts one at
/// 1 / gpu_mtbf_hours, lasting an exponential time of mean `duration`. All
/// three fields required (no published per-GPU rate); gpu_mtbf_hours 0: none.
struct FailSlowConfig {
  double gpu_mtbf_hours = 0;
  double factor = 1;
  TimeNs duration_ns = 0;
};

struct SnapshotConfig {
  /// The most training work one failure may discard: consecutive committed
  /// (fully replicated) versions are at most this much work apart
  /// (core/snapshot/interval.hpp). nullopt: "auto" (Daly's optimum from the
  /// snapshot stall and the job's MTBF, rounded to whole iterations).
  std::optional<TimeNs> interval_ns;
  std::string interval_where;  // "file:line:col: faults.snapshot.interval" when set
  int replicas = 2;            // copies in host memory, the owner's host included
  FailureDomain domain = FailureDomain::Rack;
  int keep_versions = 3;        // versions each host keeps
  double host_copy_Bps = 50e9;  // device -> host copy (PCIe) per GPU
  /// The device -> host copy of `bytes` of one GPU's state (a restore from
  /// the host's own memory takes as long, all of it a stall).
  TimeNs host_copy_ns(double bytes) const { return transfer_ns(bytes, host_copy_Bps); }
  /// Whether a snapshot's copy runs under the next iteration (CheckFreq,
  /// Mohan et al., FAST'21, section 4; Gemini, SOSP'23): the copy engines
  /// move the state while the forward and backward passes compute, and only
  /// the next update must wait for it. false: training waits for the copy.
  bool overlap = true;
  /// What a snapshot of `bytes` stalls training: with overlap, the copy
  /// beyond `window_ns`, the next iteration's time before its optimizer step
  /// (sim::snapshot_window_ns); without, all of it.
  TimeNs stall_ns(double bytes, TimeNs window_ns) const {
    const TimeNs copy = host_copy_ns(bytes);
    return overlap ? std::max<TimeNs>(0, copy - window_ns) : copy;
  }
  /// A snapshot before iterations every, 2 x every, ... of a run (`run`
  /// --backend hw, whose backend takes them); 0: none scheduled.
  int every = 0;
};

struct BaselineConfig {
  // nullopt: "auto" (Young/Daly). 30 min whether or not a `baseline:` section is written.
  std::optional<TimeNs> checkpoint_interval_ns = 1800 * kNsPerS;
  double storage_Bps = 1e12;          // aggregate remote-storage bandwidth
  TimeNs restart_ns = 600 * kNsPerS;  // full job restart (scheduler + init)
};

/// The remote-checkpoint interval in seconds: baseline.checkpoint_interval,
/// or under "auto" Daly's optimum for a write of `write_s` at the job's
/// mean time between failures `mtbf_s` (core/snapshot/interval.hpp).
double checkpoint_interval_s(const BaselineConfig& baseline, double write_s, double mtbf_s);

enum class FaultEventKind { Slow, Degrade, Background, Tenant, Jitter, Fail, Kill };
const char* to_string(FaultEventKind kind);

/// One scheduled event; which fields mean something depends on `kind`:
///   slow:       gpu or node (every GPU of that host), factor (> 1: that much
///               slower), at, duration
///   degrade:    link or scope (inter_node: every link that leaves a host;
///               intra_node: every link inside one), fraction (of bandwidth
///               left, (0, 1]), at, duration
///   background: links, fraction (of bandwidth taken, [0, 1)), at, duration
///   tenant:     links, at, duration (another job sending as fast as it can
///               on each link, as flows of traffic class `tenant`: what it
///               takes depends on the classes' weights, core/traffic_class.hpp)
///   jitter:     sigma (relative compute-time noise, >= 0)
///   fail:       target, id (GPU / host / NIC index, or a link name), at
///   kill:       rank, at_iteration (the rank's process dies before it, as kill -9)
struct FaultEvent {
  FaultEventKind kind = FaultEventKind::Slow;
  std::string where;  // "file:line:col: faults.events[3]" for later messages
  int gpu = -1;
  int node = -1;  // slow: a whole host instead of one GPU
  double factor = 1;
  std::string link;
  std::string scope;  // degrade: "inter_node" or "intra_node" instead of a link
  std::vector<std::string> links;
  double fraction = 0;
  double sigma = 0;
  FailureKind target = FailureKind::Gpu;
  std::string id;
  TimeNs at_ns = 0;
  std::optional<TimeNs> duration_ns;  // nullopt: until the end of the run
  int rank = -1;                      // kill
  std::string rank_where;             // "file:line:col: faults.events[0].rank"
  std::int64_t at_iteration = 0;      // kill
};

struct FaultConfig {
  FailureRates rates;
  LinkFlap flap;
  TimeNs heartbeat_timeout_ns = 30 * kNsPerS;  // failure -> detected
  TimeNs reinit_ns = 20 * kNsPerS;             // restart ranks on spares, rebuild communicators
  TimeNs repair_ns = 48 * 3600 * kNsPerS;      // failed hardware back in the spare pool
  int spares = 0;                              // spare GPUs (whole spare hosts)
  /// Recoveries a run through the one loop makes before a failure ends it
  /// (torchrun's --max-restarts); none: no limit.
  std::optional<int> max_restarts;
  /// What a failed or slow GPU (or NIC) takes out of the job: its whole host
  /// (the node is drained and its ranks move together to a spare host, so
  /// tensor-parallel groups stay on NVLink: how large jobs are run), or the
  /// GPU alone (its rank moves by itself, splitting its group across hosts;
  /// the campaign's iteration time does not see that).
  bool replace_host = true;
  std::string spares_where = "faults.spares";  // where it was set, for later messages
  std::optional<int> hosts_per_rack;           // racks; default: hosts on one leaf switch
  double days = 30;                            // campaign length
  MaintenanceConfig maintenance;
  FailSlowConfig fail_slow;
  SnapshotConfig snapshot;
  BaselineConfig baseline;
  std::vector<FaultEvent> events;

  /// Failures per hour of the whole cluster for the given component counts.
  /// Repeat offenders (rates.repeat_factor) add to it as components fail.
  double failures_per_hour(int gpus, int hosts, int nics, int links, int racks = 0) const;
};

/// Reads a `faults:` map. Every error is an InputError naming the file,
/// line, field and what was expected; unknown fields are rejected.
FaultConfig read_fault_config(YamlFields& faults_section);

/// The checks that need the job's size: a kill event's rank below `ranks`
/// (the plan's), a spare count at most the cluster's `gpus`. Throws an
/// InputError naming the event's field or faults.spares.
void check_fault_targets(const FaultConfig& faults, int ranks, int gpus);

}  // namespace parashift::core
