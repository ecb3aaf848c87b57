// The controller's own time per iteration (observe: state estimate, straggler
// detection, balancing; and with every module: calibration, the sync
// module's pricing of its ten candidates each iteration, replan and batch) at 16,384 GPUs:
// TP8 PP16 DP128, 128 layers, 16 micro-batches per replica. Goal: under 1 ms.
//   build-ctl/tools/bench/bench_controller --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "core/controller/aggregation_policy.hpp"
#include "core/controller/controller.hpp"
#include "core/controller/sync_policy.hpp"
#include "core/device_spec.hpp"
#include "core/planner/planner.hpp"
#include "core/rank_layout.hpp"
#include "core/scenario/cluster_view.hpp"

namespace {

using namespace parashift::core;

ParallelPlan plan_16k() {
  ParallelPlan plan;
  plan.tp = 8;
  plan.pp = 16;
  plan.dp = 128;
  plan.global_batch = 128 * 16;
  return plan;
}

// A few seeded reports with +-3% jitter, rank `slow` at `factor` x.
std::vector<StepReport> reports(const ParallelPlan& plan, int slow, double factor) {
  const RankLayout layout(plan);
  std::uint64_t state = 42;
  auto uniform = [&state] {  // splitmix64 in [-1, 1)
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * 0x1.0p-53 * 2.0 - 1.0;
  };
  std::vector<StepReport> out(8);
  for (std::size_t i = 0; i < out.size(); ++i) {
    StepReport& r = out[i];
    r.iteration_ns = 10 * kNsPerS;
    // Gradient norms at a noise scale of 300 sequences (|G|^2 = 1): each
    // replica's 16 sequences and the reduced 2,048 (the batch module's input).
    r.gradients = GradientNorms{1.0 + 300.0 / 16 * (1.0 + 0.03 * uniform()), 16,
                                1.0 + 300.0 / 2048 * (1.0 + 0.03 * uniform()), 2048};
    const auto ranks = static_cast<std::size_t>(layout.ranks());
    r.rank_compute_ns.resize(ranks);
    r.rank_exposed_comm_ns.resize(ranks);
    r.rank_peak_memory_bytes.assign(ranks, 60e9);
    for (std::size_t k = 0; k < ranks; ++k) {
      const double f = (static_cast<int>(k) == slow ? factor : 1.0) * (1.0 + 0.03 * uniform());
      r.rank_compute_ns[k] = static_cast<TimeNs>(16 * 8 * 50e6 * f);  // 16 mb x 8 layers x 50 ms
      r.rank_exposed_comm_ns[k] = static_cast<TimeNs>(1e8 * (1.0 + 0.03 * uniform()));
    }
  }
  return out;
}

void run(benchmark::State& state, int slow, double factor, bool all_modules) {
  const ParallelPlan plan = plan_16k();
  JobModel job;
  job.plan = plan;
  job.layers = 128;
  job.params_per_gpu_layer = 1.6e9 / 8;
  job.activation_bytes_per_layer = 1e8;
  job.memory_limit_bytes = 80e9;
  // The worst steady state: the balancer builds and weighs both candidates
  // every iteration (min_improvement 0) and rejects them (min_gain_s out of
  // reach), so the job never changes and the controller never rests.
  job.total_iterations = 1'000'000'000;
  if (all_modules) {
    // A 128-layer, 1.6e11-parameter model on H100s: what calibrate and sync price.
    auto inputs = std::make_shared<CostInputs>();
    inputs->model = {"bench", 128, 12288, 96, 96, 49152, FfnKind::Gelu, 51200, true};
    inputs->device = device_preset("h100-sxm-80gb");
    inputs->cluster = cluster_view_of(inputs->device, plan.gpus(), 8);
    inputs->seq_len = 2048;
    job.cost = inputs;
    job.plan.optimizer_sharding = OptimizerSharding::None;
  }
  PolicyConfig config = default_policy_config(builtin_policy_registry());
  config.find("straggler")->enabled = true;
  config.find("balance")->enabled = true;
  config.find("balance")->knobs["min_improvement"] = 0.0;
  config.find("balance")->knobs["min_gain_s"] = 1e30;
  if (all_modules) {
    // Calibrate every report, and price every sync candidate every
    // iteration without ever acting (min_improvement 1).
    config.find("calibrate")->enabled = true;
    config.find("sync")->enabled = true;
    config.find("sync")->knobs["every"] = 1;
    config.find("sync")->knobs["min_improvement"] = 1.0;
    // replan predicts the running plan every iteration and never acts
    // (min_improvement 1); it searches when the calibration detects a step
    // change, as the synthetic reports make it do now and then
    // (BM_ReplanSearch16k times one search).
    config.find("replan")->enabled = true;
    config.find("replan")->knobs["min_improvement"] = 1.0;
    // batch reads each report's gradient norms and prices its candidate
    // batches every 20 iterations, never acting (min_improvement 10).
    config.find("batch")->enabled = true;
    config.find("batch")->knobs["min_improvement"] = 10.0;
  }
  Capabilities caps;
  caps.live_repartition = true;
  caps.live_replan = true;
  caps.ranks = plan.gpus();
  Controller ctl(job, config, caps);
  auto samples = reports(plan, slow, factor);
  std::int64_t i = 0;
  for (auto _ : state) {
    StepReport& r = samples[static_cast<std::size_t>(i) % samples.size()];
    r.iteration = i++;
    auto directives = ctl.observe(r);
    benchmark::DoNotOptimize(directives);
  }
  state.counters["gpus"] = plan.gpus();
  state.counters["directives"] = static_cast<double>(ctl.directives_issued());
  state.counters["log"] = static_cast<double>(ctl.log().size());
}

void BM_ControllerHealthy16k(benchmark::State& state) {
  run(state, -1, 1.0, false);
}
void BM_ControllerSlowGpu16k(benchmark::State& state) {
  run(state, 4321, 1.5, false);
}
void BM_ControllerAllModules16k(benchmark::State& state) {
  run(state, 4321, 1.5, true);
}

BENCHMARK(BM_ControllerHealthy16k)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ControllerSlowGpu16k)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ControllerAllModules16k)->Unit(benchmark::kMicrosecond);

// The `sync` module's decision alone: its ten candidates priced by the cost
// model for the 16K-GPU job (issue #17's bound: 10 ms per bucket set).
void BM_SyncDecision16k(benchmark::State& state) {
  JobModel job;
  job.plan = plan_16k();
  job.plan.optimizer_sharding = OptimizerSharding::None;
  auto inputs = std::make_shared<CostInputs>();
  inputs->model = {"bench", 128, 12288, 96, 96, 49152, FfnKind::Gelu, 51200, true};
  inputs->device = device_preset("h100-sxm-80gb");
  inputs->cluster = cluster_view_of(inputs->device, job.plan.gpus(), 8);
  inputs->seq_len = 2048;
  job.cost = inputs;
  for (auto _ : state) {
    auto ranked = rank_sync_choices(job, SyncPolicyOptions{}, nullptr);
    benchmark::DoNotOptimize(ranked);
  }
}
BENCHMARK(BM_SyncDecision16k)->Unit(benchmark::kMicrosecond);

// One search of the `replan` module at 16,384 GPUs: the planner over every
// plan of the 128-layer model (global batch 2048, sequence 2048), ranked by
// the cost model, best kept (issue #16's bound: 100 ms).
void BM_ReplanSearch16k(benchmark::State& state) {
  PlannerInput in;
  in.model = {"bench", 128, 12288, 96, 96, 49152, FfnKind::Gelu, 51200, true};
  in.device = device_preset("h100-sxm-80gb");
  in.cluster = cluster_view_of(in.device, 16384, 8);
  in.global_batch = 2048;
  in.seq_len = 2048;
  PlannerOptions options;
  options.top_k = 1;
  std::int64_t evaluated = 0;
  for (auto _ : state) {
    const PlanSearch found = search_plans(in, options);
    evaluated = found.stats.evaluated;
    benchmark::DoNotOptimize(found);
  }
  state.counters["plans"] = static_cast<double>(evaluated);
}
BENCHMARK(BM_ReplanSearch16k)->Unit(benchmark::kMillisecond);

// The `aggregation` module's work when congestion moves, at 16,384 GPUs
// (TP8 PP16 DP128, one replica per host): pricing and searching the ring
// order of all 16 data-parallel groups. Each ring edge between hosts a and
// b crosses its NICs and one of 64 spines picked by a hash of (a, b,
// group), as ECMP does; spine p0 is loaded at 90%, so about 1 in 64 edges
// of each of a group's 8 rings is slow.
void BM_AggregationSearch16k(benchmark::State& state) {
  const ParallelPlan plan = plan_16k();
  Capabilities::RingRoutes routes;
  routes.host_of_rank = [](int rank) { return rank / 8; };
  routes.edge_links = [](int group, int from, int to) {
    std::uint64_t h =
        (static_cast<std::uint64_t>(from / 8) << 32 | static_cast<std::uint32_t>(to / 8)) ^
        (static_cast<std::uint64_t>(group) * 0x9e3779b97f4a7c15ULL);
    h = (h ^ (h >> 31)) * 0xbf58476d1ce4e5b9ULL;
    return std::vector<std::string>{"n" + std::to_string(from),
                                    "p" + std::to_string((h >> 29) % 64), "n" + std::to_string(to)};
  };
  const std::vector<std::pair<std::string, LinkShare>> loads{{"p0", 0.9}};
  std::vector<int> identity(static_cast<std::size_t>(plan.dp));
  for (int d = 0; d < plan.dp; ++d) identity[static_cast<std::size_t>(d)] = d;
  double worst_after = 0;
  for (auto _ : state) {
    worst_after = 1;
    for (int g = 0; g < plan.pp; ++g) {
      RingPricer pricer(plan, g, routes, loads);
      const std::vector<int> order = pricer.search(identity, 32);
      worst_after = std::max(worst_after, pricer.score(order).worst);
    }
    benchmark::DoNotOptimize(worst_after);
  }
  state.counters["worst_after"] = worst_after;
}
BENCHMARK(BM_AggregationSearch16k)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
