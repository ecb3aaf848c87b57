// Speed of the flow-level network (max-min sharing, incremental recomputation)
// on the shipped 1,024-GPU topology. Run from the repository root:
//   build/tools/bench/bench_network --benchmark_counters_tabular=true
// (PARASHIFT_TOPOLOGY overrides the topology file.)
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <random>

#include "sim/network/collectives.hpp"
#include "sim/network/flow_network.hpp"

namespace {

using namespace parashift;

const topo::Topology& h100_1k() {
  static const topo::Topology t = [] {
    const char* file = std::getenv("PARASHIFT_TOPOLOGY");
    return topo::load_topology(file ? file : "topologies/h100-1k.dot");
  }();
  return t;
}

void report(benchmark::State& state, const sim::Kernel& k, const sim::FlowNetwork& net,
            std::uint64_t iterations_events) {
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(iterations_events), benchmark::Counter::kIsRate);
  state.counters["events"] = static_cast<double>(k.executed());
  state.counters["flows"] = static_cast<double>(net.stats().flows_started);
  state.counters["solves"] = static_cast<double>(net.stats().recomputations);
  state.counters["rerated/solve"] =
      static_cast<double>(net.stats().flows_rerated) /
      static_cast<double>(std::max<std::uint64_t>(1, net.stats().recomputations));
  state.counters["sim_ms"] = static_cast<double>(k.now()) * 1e-6;
}

// 1 GB ring all-reduce over 128 ranks: GPUs 0, s, 2s, ... (s = range(0)):
// s = 1 is 16 whole nodes, s = 8 is rail 0 of 128 nodes.
void BM_RingAllReduce128(benchmark::State& state) {
  const auto& t = h100_1k();
  const int stride = static_cast<int>(state.range(0));
  std::vector<int> gpus;
  for (int i = 0; i < 128; ++i) gpus.push_back(i * stride);
  std::uint64_t events = 0;
  for (auto _ : state) {
    sim::Kernel k;
    sim::FlowNetwork net(k, t);
    sim::run_collective(
        net, {core::CollectiveKind::AllReduce, sim::CollectiveAlgorithm::Ring, 1e9, gpus}, {});
    k.run();
    events += k.executed();
    report(state, k, net, events);
  }
}
BENCHMARK(BM_RingAllReduce128)->Arg(1)->Arg(8)->Unit(benchmark::kMillisecond);

// range(0) flows between random GPU pairs (seeded), 1-100 MB each, all
// started at t = 0, run to completion.
void BM_ConcurrentFlows(benchmark::State& state) {
  const auto& t = h100_1k();
  const int flows = static_cast<int>(state.range(0));
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<int> gpu(0, t.gpu_count() - 1);
  std::uniform_real_distribution<double> size(1e6, 1e8);
  std::vector<std::tuple<int, int, double>> pairs;
  while (static_cast<int>(pairs.size()) < flows) {
    const int a = gpu(rng);
    const int b = gpu(rng);
    if (a != b) pairs.emplace_back(a, b, size(rng));
  }
  std::uint64_t events = 0;
  for (auto _ : state) {
    sim::Kernel k;
    sim::FlowNetwork net(k, t);
    std::uint64_t hash = 0;
    for (const auto& [a, b, bytes] : pairs)
      net.start_flow(
          a, b, bytes, [] {}, hash++);
    k.run();
    events += k.executed();
    report(state, k, net, events);
  }
}
BENCHMARK(BM_ConcurrentFlows)->Arg(1000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
