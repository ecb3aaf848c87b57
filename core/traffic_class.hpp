// Traffic classes: what a flow on the network is for, and the weights by
// which classes share a link (the scenario's `traffic:` section).
//
//   A link shared by flows of several classes is divided by weighted max-min
//   (sim/network/max_min.hpp): each flow of class c weighs w_c, so while
//   they all want more, a gradient-sync flow of weight 8 beside a tenant's
//   flow of weight 1 gets 8/9 of the link and the tenant 1/9; when the
//   gradient sync is idle the tenant gets it all (work-conserving, as the
//   weighted round-robin queues of a switch's traffic classes). The weight is
//   per flow, not per class: a class with more flows on a link gets more of it
//   (switches share a queue per flow hash the same way once flows are hashed
//   to queues).
//
// Every weight defaults to 1 (plain max-min, the network without classes).
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

namespace parashift::core {

class YamlFields;

enum class TrafficClass {
  GradSync,     // data-parallel gradient buckets and deferred syncs
  Pipeline,     // activations and gradients between pipeline stages
  ParamGather,  // ZeRO / FSDP parameter all-gathers
  Snapshot,     // snapshot replication and restore traffic
  Data,         // data loading
  Tenant,       // other jobs' traffic on the same links
  Other,        // anything not named above (tools, tests)
};
inline constexpr std::size_t kTrafficClasses = 7;

const char* to_string(TrafficClass c);

struct TrafficWeights {
  std::array<double, kTrafficClasses> weight{1, 1, 1, 1, 1, 1, 1};
  double of(TrafficClass c) const { return weight[static_cast<std::size_t>(c)]; }
  bool is_default() const;
  /// "grad_sync 8, tenant 1" for the classes not at 1; "" when default.
  std::string describe() const;
  friend bool operator==(const TrafficWeights&, const TrafficWeights&) = default;
};

/// Smallest and largest weight a scenario may give (their ratio keeps the
/// max-min solver's sums exact to ~1e-4 of the smallest flow's share).
inline constexpr double kMinTrafficWeight = 1e-3;
inline constexpr double kMaxTrafficWeight = 1e3;

/// Reads a `traffic:` map of class name -> weight (grad_sync, pipeline,
/// param_gather, snapshot, data, tenant, other; each in [1e-3, 1e3], classes
/// not named stay at 1). An unknown class or a weight out of range is an
/// InputError naming the field.
TrafficWeights read_traffic_weights(YamlFields& traffic);

}  // namespace parashift::core
