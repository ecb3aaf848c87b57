// What the policy tells a backend to do. A Directive is a value: printable
// and serialisable, so every decision is logged and can be replayed.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/parallel_plan.hpp"

namespace parashift::core {

/// Switch the whole job to another plan.
struct ReplanDirective {
  ParallelPlan plan;
};
/// Move layers between pipeline stages: layers_per_stage[i] layers on stage i.
struct RepartitionDirective {
  std::vector<int> layers_per_stage;
};
/// Give data-parallel replica i micro_batches[i] micro-batches (sum unchanged).
struct RebalanceDirective {
  std::vector<int> micro_batches;
};
/// Take an in-memory snapshot of every rank's shards.
struct SnapshotDirective {
  long long version = 0;
};
/// Restore shards to `version` from peers; from_remote: read the whole
/// state back from the remote checkpoint that holds `version` (every
/// in-memory replica of some shard was lost).
struct RestoreDirective {
  long long version = 0;
  bool from_remote = false;
};
/// Put a failed rank's work on a spare GPU.
struct RemapDirective {
  int rank = 0;
  int spare_gpu = 0;
};

/// Run data-parallel group `group`'s rings in another order: position k of
/// every ring is replica order[k] (a permutation of 0..dp-1). The sums are
/// the same; the ring's edges, and so the links they cross, are not.
struct ReorderDirective {
  int group = 0;
  std::vector<int> order;
};

using DirectiveAction =
    std::variant<ReplanDirective, RepartitionDirective, RebalanceDirective, SnapshotDirective,
                 RestoreDirective, RemapDirective, ReorderDirective>;

struct Directive {
  DirectiveAction action;
  std::string reason;           // why the policy decided it
  double predicted_gain_s = 0;  // over the remaining run, net of its cost
};

/// e.g. "repartition [10,10,12,10] (stage 2 slow: 1.5x; gain 12.3 s)".
std::string to_string(const Directive& directive);
void to_json(nlohmann::json& out, const Directive& directive);
const char* kind_name(const DirectiveAction& action);
/// A backend's check of a ReorderDirective for a plan with `groups`
/// data-parallel groups of `dp` replicas: std::invalid_argument naming the
/// group unless it is one of them and the order is a permutation of 0..dp-1.
void check_reorder(const ReorderDirective& directive, int groups, int dp);
/// "[10,10,12,10]": how directives print layer splits and micro-batch shares.
std::string format_int_list(const std::vector<int>& values);

}  // namespace parashift::core
