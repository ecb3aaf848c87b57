// The planner: enumerate every valid plan (core/planner/plan_space.hpp),
// drop those that do not fit in memory, rank the rest by the analytical
// iteration time (core/cost/estimate.hpp) and keep the best K.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/cost/cluster_view.hpp"
#include "core/cost/cost_options.hpp"
#include "core/cost/device_groups.hpp"
#include "core/cost/estimate.hpp"
#include "core/cost/speed_balance.hpp"
#include "core/device_spec.hpp"
#include "core/model_spec.hpp"
#include "core/parallel_plan.hpp"
#include "core/planner/plan_pins.hpp"
#include "topologies/topology.hpp"

namespace parashift::core {

struct PlannerInput {
  ModelSpec model;
  DeviceSpec device;
  ClusterView cluster;  // cluster.gpus GPUs, cluster.gpus_per_node per node
  int global_batch = 0;
  int seq_len = 0;
  Precision precision = Precision::Bf16;
  /// Copied into every plan searched, like precision (the scenario's).
  RankOrder order = RankOrder::TpCpDpPp;
  PlanPins pins;
  CostOptions options;
  /// A plan to place among the ranked ones (e.g. the scenario's own).
  std::optional<ParallelPlan> reference;
  /// GPUs slower than the device (by index; rank r runs on GPU r): each
  /// plan is estimated as the balance module would run it there
  /// (core/cost/speed_balance.hpp). Empty: every GPU is the device.
  std::vector<GpuFactor> gpu_factors;
  /// A cluster of more than one device type (core/cost/device_groups.hpp):
  /// the groups whose device is not `device` run at their compute factor
  /// for each plan (times any gpu_factors entry), and a plan must fit the
  /// least HBM of all. Empty: every GPU is `device`.
  std::vector<DeviceGroup> device_groups;
  /// A backend whose kernels are not the presets' (CostInputs::work_model:
  /// the CPU executor's op list timed by its profile): each plan's work
  /// from it, on `device`. Empty: core::work_profile.
  std::function<WorkProfile(const DeviceSpec&, const ParallelPlan&)> work_model;
};

/// The compute factor of every GPU not at `in.device`'s pace under `plan`:
/// the device groups' and gpu_factors, merged.
std::vector<GpuFactor> plan_gpu_factors(const PlannerInput& in, const ParallelPlan& plan);

struct PlannerOptions {
  int top_k = 10;
  /// Share of HBM kept free for the allocator's fragmentation, NCCL and
  /// cuBLAS workspaces and the CUDA context, which peak_memory() does not
  /// count: a plan fits when peak_memory().total_bytes() <=
  /// (1 - memory_margin) * hbm_bytes. 5% of 80 GB is 4 GB.
  double memory_margin = 0.05;
  int max_cp = 16;
  /// Plans for which this is false are skipped (counted in
  /// SearchStats::not_admitted): those the backend cannot run. Empty: all.
  std::function<bool(const ParallelPlan&)> admit;
};

struct RankedPlan {
  ParallelPlan plan;
  IterationEstimate estimate;
  std::string label;  // plan.label()
};

struct SearchStats {
  std::int64_t enumerated = 0;        // valid plans the space yielded
  std::int64_t pruned_by_memory = 0;  // ... over the memory limit
  std::int64_t not_admitted = 0;      // ... that PlannerOptions::admit refused
  std::int64_t evaluated = 0;         // ... estimated (the rest)
  double wall_ms = 0;                 // the whole search, steady clock
};

/// Where the reference plan stands.
struct ReferenceStanding {
  RankedPlan ranked;
  bool fits_memory = false;
  bool valid = false;  // problems() is empty for the cluster
  bool matches_pins = false;
  /// The search enumerated this very plan, so it is one of the ranked ones.
  /// False e.g. for a plan whose layers do not split evenly over its
  /// virtual stages: `rank` then says where it would stand.
  bool in_space = false;
  /// 1 + the number of evaluated plans strictly faster (ties share a rank).
  std::int64_t rank = 0;
};

struct PlanSearch {
  std::vector<RankedPlan> top;  // best first, at most top_k
  SearchStats stats;
  std::optional<ReferenceStanding> reference;
};

struct Scenario;

/// The scenario's model, device, cluster (of `topology`), batch, sequence
/// length and precision; no pins, no reference plan.
PlannerInput planner_input_of(const Scenario& scenario, const topo::Topology& topology);
PlannerInput planner_input_of(const Scenario& scenario);

/// Bytes a plan may use on `device` under `margin`.
double usable_memory_bytes(const DeviceSpec& device, double margin);

/// The ranking order: shorter iteration first, ties by label. Strict weak.
bool ranks_before(const RankedPlan& a, const RankedPlan& b);

/// Enumerates, prunes by memory, ranks, keeps top_k. Deterministic: the
/// same input gives the same plans in the same order. Allocation-free per
/// plan except when two plans tie on iteration time at the top-K boundary.
PlanSearch search_plans(const PlannerInput& input, const PlannerOptions& options = {});

}  // namespace parashift::core
