#include "core/controller/pipeline_model.hpp"

#include <algorithm>
#include "core/assert.hpp"
#include <functional>
#include <limits>
#include <numeric>
#include <queue>
#include <utility>

namespace parashift::core {

double StageCosts::slowest_cost(int stage) const {
  double c = 0;
  for (int d = 0; d < replicas; ++d) c = std::max(c, cost(stage, d));
  return c;
}

StageCosts stage_costs(const StateEstimate& state, const JobModel& job) {
  StageCosts costs;
  costs.stages = job.plan.pp;
  costs.replicas = job.plan.dp;
  costs.chunks = job.plan.virtual_stages;
  const auto workers =
      static_cast<std::size_t>(costs.stages) * static_cast<std::size_t>(costs.replicas);
  costs.layer_ns.assign(workers, 0.0);
  costs.fixed_ns.assign(job.stage_fixed_ns.begin(), job.stage_fixed_ns.end());
  const auto& memory = state.peak_memory_bytes();
  if (!memory.empty()) costs.memory_bytes.assign(workers, 0.0);
  const auto& u = state.layer_ns();
  for (int r = 0; r < state.ranks(); ++r) {
    const auto w = static_cast<std::size_t>(state.replica_of(r) * costs.stages + state.stage_of(r));
    const auto ri = static_cast<std::size_t>(r);
    costs.layer_ns[w] = std::max(costs.layer_ns[w], u[ri]);
    if (!memory.empty()) costs.memory_bytes[w] = std::max(costs.memory_bytes[w], memory[ri]);
  }
  return costs;
}

double replica_time_ns(const StageCosts& costs, const std::vector<int>& stage_layers, int replica,
                       int micro_batches) {
  double slowest = 0;
  double sum = 0;
  for (int s = 0; s < costs.stages; ++s) {
    const double t = costs.fixed_ns[static_cast<std::size_t>(s)] +
                     stage_layers[static_cast<std::size_t>(s)] * costs.cost(s, replica);
    slowest = std::max(slowest, t);
    sum += t;
  }
  return (micro_batches - 1) * slowest + sum / costs.chunks;
}

double iteration_time_ns(const StageCosts& costs, const std::vector<int>& stage_layers,
                         const std::vector<int>& micro_batches) {
  double t = 0;
  for (int d = 0; d < costs.replicas; ++d) {
    t = std::max(
        t, replica_time_ns(costs, stage_layers, d, micro_batches[static_cast<std::size_t>(d)]));
  }
  return t;
}

namespace {

// Marginal allocation of `total` units over n items, each starting at `start[i]`
// and capped at cap[i]; time(i, k) is item i's time holding k units,
// increasing in k. Empty when infeasible.
// `seed_level` only saves work: any level at most the optimum, e.g. the least
// item time under some allocation of `total` units that respects `start`.
// Every unit whose time is <= seed_level is among the `total` smallest (at
// most `total` of them exist), so they are placed by a plain scan first and
// the heap only places the rest.
template <class TimeFn>
std::vector<int> marginal_allocation(const std::vector<int>& start, const std::vector<int>& cap,
                                     int total, double seed_level, const TimeFn& time) {
  std::vector<int> n = start;
  int placed = std::accumulate(n.begin(), n.end(), 0);
  if (placed > total) return {};
  for (std::size_t i = 0; i < n.size(); ++i) {
    if (n[i] > cap[i]) return {};
    // (`placed < total` only guards a time that does not increase.)
    for (; n[i] < cap[i] && placed < total && time(i, n[i] + 1) <= seed_level; ++placed) ++n[i];
  }
  // Min-heap on (time after one more unit, index): ties go to the lowest index.
  using Entry = std::pair<double, std::size_t>;
  std::vector<Entry> heap;
  heap.reserve(n.size());
  for (std::size_t i = 0; i < n.size(); ++i) {
    if (n[i] < cap[i]) heap.emplace_back(time(i, n[i] + 1), i);
  }
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> next(std::greater<>{},
                                                                      std::move(heap));
  for (; placed < total; ++placed) {
    if (next.empty()) return {};
    const std::size_t i = next.top().second;
    next.pop();
    ++n[i];
    if (n[i] < cap[i]) next.emplace(time(i, n[i] + 1), i);
  }
  return n;
}

}  // namespace

std::vector<int> balanced_stage_layers(const std::vector<double>& cost_ns,
                                       const std::vector<double>& fixed_ns, int layers,
                                       int min_layers, const std::vector<int>& max_layers) {
  PARASHIFT_ASSERT(cost_ns.size() == fixed_ns.size() && cost_ns.size() == max_layers.size());
  const std::vector<int> start(cost_ns.size(), min_layers);
  auto time = [&](std::size_t s, int k) { return fixed_ns[s] + k * cost_ns[s]; };
  // min_layers everywhere is the only allocation known to respect `start`.
  double seed = std::numeric_limits<double>::infinity();
  for (std::size_t s = 0; s < start.size(); ++s) seed = std::min(seed, time(s, min_layers));
  return marginal_allocation(start, max_layers, layers, seed, time);
}

std::vector<int> chunk_split(const std::vector<int>& stage_layers, int chunks) {
  const std::size_t stages = stage_layers.size();
  std::vector<int> split(stages * static_cast<std::size_t>(chunks));
  for (std::size_t s = 0; s < stages; ++s) {
    for (int k = 0; k < chunks; ++k) {
      split[static_cast<std::size_t>(k) * stages + s] =
          stage_layers[s] / chunks + (k < stage_layers[s] % chunks ? 1 : 0);
    }
  }
  return split;
}

std::vector<int> balanced_micro_batches(const StageCosts& costs,
                                        const std::vector<int>& stage_layers, int total,
                                        const std::vector<int>& max_micro,
                                        const std::vector<int>& current, int step) {
  // T_d(m) = (m - 1) * slowest_d + fill_d: precompute both per replica.
  std::vector<std::pair<double, double>> shape(static_cast<std::size_t>(costs.replicas));
  for (int d = 0; d < costs.replicas; ++d) {
    const double fill = replica_time_ns(costs, stage_layers, d, 1);
    shape[static_cast<std::size_t>(d)] = {replica_time_ns(costs, stage_layers, d, 2) - fill, fill};
  }
  // In units of `step` micro-batches.
  auto time = [&](std::size_t d, int units) {
    return (units * step - 1) * shape[d].first + shape[d].second;
  };
  std::vector<int> caps;
  for (int cap : max_micro) caps.push_back(cap / step);
  const std::vector<int> start(static_cast<std::size_t>(costs.replicas), 1);
  double seed = std::numeric_limits<double>::infinity();
  for (std::size_t d = 0; d < start.size(); ++d) {
    seed = std::min(seed, time(d, current.empty() ? 1 : std::max(1, current[d] / step)));
  }
  std::vector<int> units = marginal_allocation(start, caps, total / step, seed, time);
  for (int& u : units) u *= step;
  return units;
}

}  // namespace parashift::core
