#include <doctest/doctest.h>

#include "sim/collective.hpp"
#include "test_topologies.hpp"

using namespace parashift;
using core::CollectiveKind;

TEST_CASE("ring collectives on a star: steps x (chunk / bandwidth + path latency)") {
  // 4 GPUs, 100 GB/s cables, 1 us per link: every neighbour pair is 2 links,
  // 100 GB/s bottleneck, 2 us latency.
  const auto t = test::star(4, 100e9, 1'000);
  const sim::PathModel paths(t);
  const std::vector<int> ring{0, 1, 2, 3};
  // 1 GB all-reduce: chunk 250 MB -> 2.5 ms + 2 us per step, 2(n-1) = 6 steps.
  CHECK(sim::ring_wire_ns(paths, CollectiveKind::AllReduce, 1e9, ring) == 6 * 2'502'000);
  // Reduce-scatter and all-gather: n-1 = 3 steps.
  CHECK(sim::ring_wire_ns(paths, CollectiveKind::ReduceScatter, 1e9, ring) == 3 * 2'502'000);
  CHECK(sim::ring_wire_ns(paths, CollectiveKind::AllGather, 1e9, ring) == 3 * 2'502'000);
  // Send/recv: every rank passes the whole 1 GB to its neighbour at once: 10 ms + 2 us.
  CHECK(sim::ring_wire_ns(paths, CollectiveKind::SendRecv, 1e9, ring) == 10'002'000);
  // A group of one moves nothing.
  CHECK(sim::ring_wire_ns(paths, CollectiveKind::AllReduce, 1e9, {2}) == 0);
}

TEST_CASE("the slowest ring neighbour sets every step") {
  auto t = test::star(4, 100e9, 1'000);
  // Halve GPU 2's uplink (link ids: gpu g's cable is links 2g (up) and 2g+1 (down)).
  const auto up = t.find_link(t.gpu_node(2), 0);
  REQUIRE(up >= 0);
  t.set_link_bandwidth(up, 50e9);
  const sim::PathModel paths(t);
  // 1 GB all-gather: chunk 250 MB; step 2 -> 3 crosses 50 GB/s: 5 ms + 2 us, 3 steps.
  CHECK(sim::ring_wire_ns(paths, CollectiveKind::AllGather, 1e9, {0, 1, 2, 3}) ==
        3 * 5'002'000);
}

TEST_CASE("nccl-tests bus bandwidth factors") {
  CHECK(sim::bus_factor(CollectiveKind::AllReduce, 8) == doctest::Approx(2.0 * 7 / 8));
  CHECK(sim::bus_factor(CollectiveKind::ReduceScatter, 8) == doctest::Approx(7.0 / 8));
  CHECK(sim::bus_factor(CollectiveKind::AllGather, 4) == doctest::Approx(0.75));
}
