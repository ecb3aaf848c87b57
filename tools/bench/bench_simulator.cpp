// One simulated iteration at 1K, 4K and 16K GPUs (weak scaling: Llama-3
// 405B, TP8 PP16, data parallelism growing with the cluster, 16 micro-batches
// per replica), and the two shipped benchmark scenarios. The topology is
// built once, outside the timed loop; each iteration is simulated afresh.
//   build/tools/bench/bench_simulator --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "core/cost/work_profile.hpp"
#include "core/scenario/scenario.hpp"
#include "sim/iteration.hpp"

namespace {

using namespace parashift;

void run_iterations(benchmark::State& state, const core::Scenario& s) {
  const sim::PathModel paths(s.topology);
  const auto profile = core::work_profile(s.model, s.device, s.plan, s.training.seq_len);
  const sim::IterationInput in = sim::scenario_input(s, s.device, sim::NetworkModel::MaxMin);
  std::uint64_t events = 0;
  for (auto _ : state) {
    const auto r = sim::simulate_iteration(in, profile, paths);
    events = r.events;
    benchmark::DoNotOptimize(r.iteration_ns);
  }
  state.counters["gpus"] = s.topology.gpu_count();
  state.counters["events"] = static_cast<double>(events);
  state.counters["events_per_s"] = benchmark::Counter(
      static_cast<double>(events), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_weak_scaling_llama3_405b(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const int dp = nodes * 8 / (8 * 16);
  const core::Scenario s = core::load_scenario(
      std::string(PARASHIFT_SOURCE_DIR) + "/scenarios/bench-llama3-405b-16k.yaml",
      {"cluster.topology={generator: rail-fat-tree, node: dgx-h100, tiers: 3, nodes: " +
           std::to_string(nodes) + "}",
       "plan.dp=" + std::to_string(dp), "training.global_batch=" + std::to_string(16 * dp)});
  run_iterations(state, s);
}
BENCHMARK(BM_weak_scaling_llama3_405b)
    ->Arg(128)
    ->Arg(512)
    ->Arg(2048)
    ->Unit(benchmark::kMillisecond);

void BM_scenario(benchmark::State& state, const char* file) {
  const core::Scenario s =
      core::load_scenario(std::string(PARASHIFT_SOURCE_DIR) + "/scenarios/" + file);
  run_iterations(state, s);
}
BENCHMARK_CAPTURE(BM_scenario, gpt3_175b_1k, "bench-gpt3-175b-1k.yaml")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_scenario, llama3_405b_16k, "bench-llama3-405b-16k.yaml")
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
