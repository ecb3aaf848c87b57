#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <random>
#include <stdexcept>

#include "../test_topologies.hpp"
#include "network_topologies.hpp"
#include "sim/network/flow_network.hpp"
#include "sim/path_model.hpp"

using namespace parashift;
using sim::TimeNs;

TEST_CASE("one flow alone: bytes / bottleneck + path latency") {
  // 2 GPUs on a star, 100 GB/s cables, 1 us per link: the path is 2 links.
  const auto t = test::star(2, 100e9, 1'000);
  sim::Kernel k;
  sim::FlowNetwork net(k, t);
  TimeNs done = -1;
  net.start_flow(0, 1, 1e9, [&] { done = k.now(); });
  k.run();
  // 1 GB / 100 GB/s = 10 ms; + 2 x 1 us latency.
  CHECK(done == 10'002'000);
  CHECK(done == sim::PathModel(t).transfer_ns(0, 1, 1e9));
  CHECK(net.active_flows() == 0);
}

TEST_CASE("two flows sharing a link get half each, a departure speeds up the other") {
  const auto t = test::star(3, 100e9, 1'000);
  sim::Kernel k;
  sim::FlowNetwork net(k, t);
  TimeNs done_a = -1;
  TimeNs done_b = -1;
  // A: 0 -> 2, 1 GB; B: 1 -> 2, 0.5 GB. Both cross the switch -> GPU 2 link.
  const auto a = net.start_flow(0, 2, 1e9, [&] { done_a = k.now(); });
  const auto b = net.start_flow(1, 2, 0.5e9, [&] { done_b = k.now(); });
  k.run_until(1'000'000);
  // 100 GB/s shared by 2 -> 50 GB/s each.
  CHECK(net.flow_rate_Bps(a) == 50e9);
  CHECK(net.flow_rate_Bps(b) == 50e9);
  CHECK(net.active_flows() == 2);
  // B: 0.5 GB / 50 GB/s = 10 ms of sending; arrives 2 us later.
  // A: 0.5 GB sent by 10 ms; the other 0.5 GB at 100 GB/s takes 5 ms -> 15 ms.
  k.run_until(12'000'000);
  CHECK(done_b == 10'002'000);
  CHECK(net.flow_rate_Bps(a) == 100e9);
  // At 12 ms: 0.5 GB - 2 ms x 100 GB/s = 0.3 GB left.
  CHECK(net.flow_remaining_bytes(a) == doctest::Approx(0.3e9));
  k.run();
  CHECK(done_a == 15'002'000);
  CHECK_FALSE(net.is_sending(a));
}

TEST_CASE("three flows, one limited elsewhere: the others share the leftover") {
  const auto t = test::star(4, 100e9, 1'000);
  sim::Kernel k;
  sim::FlowNetwork net(k, t);
  // GPU 0's uplink degraded to 10 GB/s (the network's copy only).
  net.set_link_bandwidth(test::uplink(t, 0), 10e9);
  std::array<TimeNs, 3> done{-1, -1, -1};
  std::array<sim::FlowId, 3> id;
  // A: 0 -> 3, B: 1 -> 3, C: 2 -> 3, 0.9 GB each; all share the link into GPU 3.
  for (int i = 0; i < 3; ++i) {
    id[i] = net.start_flow(i, 3, 0.9e9, [&done, &k, i] { done[i] = k.now(); });
  }
  k.run_until(1'000);
  // Fair shares: uplink 0: 10 / 1; into GPU 3: 100 / 3 = 33.3. Uplink 0 is the
  // bottleneck: A = 10 GB/s; B and C split the remaining 90 -> 45 GB/s each.
  CHECK(net.flow_rate_Bps(id[0]) == 10e9);
  CHECK(net.flow_rate_Bps(id[1]) == 45e9);
  CHECK(net.flow_rate_Bps(id[2]) == 45e9);
  k.run();
  // B, C: 0.9 GB / 45 GB/s = 20 ms (+ 2 us). A has sent 0.2 GB by then; it is
  // still held to 10 GB/s by its uplink: 0.7 GB / 10 GB/s = 70 ms -> 90 ms.
  CHECK(done[1] == 20'002'000);
  CHECK(done[2] == 20'002'000);
  CHECK(done[0] == 90'002'000);
}

TEST_CASE("bandwidth degraded mid-flow") {
  const auto t = test::star(2, 100e9, 1'000);
  sim::Kernel k;
  sim::FlowNetwork net(k, t);
  TimeNs done = -1;
  net.start_flow(0, 1, 1e9, [&] { done = k.now(); });
  k.schedule_at(5'000'000, [&] { net.set_link_bandwidth(test::uplink(t, 0), 25e9); });
  k.run();
  // 5 ms at 100 GB/s = 0.5 GB; the other 0.5 GB at 25 GB/s = 20 ms -> 25 ms (+ 2 us).
  CHECK(done == 25'002'000);
  CHECK(net.link_bandwidth_Bps(test::uplink(t, 0)) == 25e9);
  CHECK(t.link(test::uplink(t, 0)).bandwidth_Bps == 100e9);  // topology untouched
}

TEST_CASE("a stalled link holds its flows until restored") {
  const auto t = test::star(2, 100e9, 1'000);
  sim::Kernel k;
  sim::FlowNetwork net(k, t);
  TimeNs done = -1;
  net.start_flow(0, 1, 1e9, [&] { done = k.now(); });
  k.schedule_at(2'000'000, [&] { net.set_link_bandwidth(test::downlink(t, 1), 0); });
  k.schedule_at(7'000'000, [&] { net.set_link_bandwidth(test::downlink(t, 1), 100e9); });
  k.run();
  // 2 ms sending, 5 ms stalled, 8 ms more: sending ends at 15 ms; + 2 us.
  CHECK(done == 15'002'000);
}

TEST_CASE("link utilisation: bytes carried and busy time") {
  const auto t = test::star(3, 100e9, 1'000);
  sim::Kernel k;
  sim::FlowNetwork net(k, t);
  // As in the sharing case: A 0 -> 2 (1 GB) ends at 15 ms, B 1 -> 2 (0.5 GB) at 10 ms.
  net.start_flow(0, 2, 1e9, {});
  net.start_flow(1, 2, 0.5e9, {});
  const auto into2 = test::downlink(t, 2);
  k.run_until(5'000'000);
  // Mid-run: 2 flows x 50 GB/s x 5 ms = 0.5 GB so far.
  CHECK(net.link_bytes(into2) == doctest::Approx(0.5e9));
  CHECK(net.link_busy_ns(into2) == 5'000'000);
  k.run();
  // Every byte crosses the link into GPU 2: 1.5 GB, busy from 0 to 15 ms:
  // utilisation 1.5 GB / (100 GB/s x 15 ms) = 1.
  CHECK(net.link_bytes(into2) == doctest::Approx(1.5e9));
  CHECK(net.link_busy_ns(into2) == 15'000'000);
  CHECK(net.link_bytes(test::uplink(t, 0)) == doctest::Approx(1e9));
  CHECK(net.link_bytes(test::uplink(t, 1)) == doctest::Approx(0.5e9));
  CHECK(net.link_busy_ns(test::uplink(t, 1)) == 10'000'000);
  CHECK(net.link_bytes(test::uplink(t, 2)) == 0);
}

TEST_CASE("each owner's bytes on a link are counted apart, flows in flight too") {
  const auto t = test::star(4, 100e9, 1'000);
  sim::Kernel k;
  sim::FlowNetwork net(k, t);
  // GPUs 0, 1 are owner 0's, GPU 2 owner 1's, GPU 3 no one's.
  net.set_gpu_owners({0, 0, 1, -1});
  // Into GPU 3: A from 0 (1 GB), B from 2 (0.5 GB), C from 1 (0.5 GB):
  // 100 GB/s / 3 each until B and C end at 15 ms, then A alone.
  net.start_flow(0, 3, 1e9, {});
  net.start_flow(2, 3, 0.5e9, {});
  net.start_flow(1, 3, 0.5e9, {});
  const auto into3 = test::downlink(t, 3);
  k.run_until(6'000'000);
  // At 6 ms: 100/3 GB/s x 6 ms = 0.2 GB a flow so far; owner 0 has two.
  CHECK(net.link_owner_bytes(into3, 0) == doctest::Approx(0.4e9));
  CHECK(net.link_owner_bytes(into3, 1) == doctest::Approx(0.2e9));
  CHECK(net.link_bytes(into3) == doctest::Approx(0.6e9));
  k.run();
  // In all: owner 0 sent A and C (1.5 GB), owner 1 B (0.5 GB); nobody owns 5.
  CHECK(net.link_owner_bytes(into3, 0) == doctest::Approx(1.5e9));
  CHECK(net.link_owner_bytes(into3, 1) == doctest::Approx(0.5e9));
  CHECK(net.link_owner_bytes(into3, 5) == 0);
  CHECK(net.link_owner_bytes(test::uplink(t, 2), 0) == 0);
  CHECK(net.link_owner_bytes(test::uplink(t, 2), 1) == doctest::Approx(0.5e9));
}

TEST_CASE("only the component of the change is recomputed") {
  const auto t = test::star(4, 100e9, 1'000);
  sim::Kernel k;
  sim::FlowNetwork net(k, t);
  TimeNs done_a = -1;
  net.start_flow(0, 1, 1e9, [&] { done_a = k.now(); });  // A
  k.run_until(0);
  CHECK(net.stats().flows_rerated == 1);
  // B: 2 -> 3 shares no link with A: its start re-rates B alone.
  k.schedule_at(1'000'000, [&] { net.start_flow(2, 3, 0.1e9, {}); });
  k.run_until(1'000'000);
  CHECK(net.stats().flows_rerated == 2);
  // B ends at 2 ms: no flow is left in its component, nothing is re-solved.
  k.run_until(2'000'000);
  CHECK(net.stats().recomputations == 2);
  // C: 0 -> 2 shares A's uplink: A and C are re-rated together.
  k.schedule_at(3'000'000, [&] { net.start_flow(0, 2, 0.1e9, {}); });
  k.run_until(3'000'000);
  CHECK(net.stats().flows_rerated == 4);
  k.run();
  // A: 0.3 GB in 3 ms; 50 GB/s while C sends 0.1 GB (2 ms): 0.1 GB more;
  // 0.6 GB left at 100 GB/s = 6 ms -> 11 ms (+ 2 us).
  CHECK(done_a == 11'002'000);
}

TEST_CASE("flows started at one instant cost one recomputation") {
  const auto t = test::star(8, 100e9, 1'000);
  sim::Kernel k;
  sim::FlowNetwork net(k, t);
  int done = 0;
  for (int i = 0; i < 8; ++i) net.start_flow(i, (i + 1) % 8, 1e9, [&] { ++done; });
  k.run();
  // One solve at t = 0; all 8 finish at 10 ms in the same network event.
  CHECK(done == 8);
  CHECK(net.stats().recomputations == 1);
  CHECK(net.stats().updates == 2);
  CHECK(k.now() == 10'002'000);
}

TEST_CASE("empty flows: to itself immediately, zero bytes after the latency") {
  const auto t = test::star(2, 100e9, 1'000);
  sim::Kernel k;
  sim::FlowNetwork net(k, t);
  TimeNs self = -1;
  TimeNs empty = -1;
  CHECK_FALSE(net.start_flow(1, 1, 1e9, [&] { self = k.now(); }).valid());
  CHECK_FALSE(net.start_flow(0, 1, 0, [&] { empty = k.now(); }).valid());
  k.run();
  CHECK(self == 0);
  CHECK(empty == 2'000);
  CHECK_THROWS_AS(net.start_flow(0, 2, 1, {}), std::invalid_argument);
  CHECK_THROWS_AS(net.set_link_bandwidth(-1, 1), std::invalid_argument);
}

TEST_CASE("inexact rates do not drift: many flows of odd sizes end exactly once") {
  // 3 flows share a 100 GB/s link: 33.33 GB/s each, not exact in binary.
  const auto t = test::star(4, 100e9, 0);
  sim::Kernel k;
  sim::FlowNetwork net(k, t);
  std::array<TimeNs, 3> done{-1, -1, -1};
  // 1 GB each: 1e9 / (100e9 / 3) = 30 ms exactly in real arithmetic.
  for (int i = 0; i < 3; ++i) {
    net.start_flow(i, 3, 1e9, [&done, &k, i] { done[i] = k.now(); });
  }
  k.run();
  CHECK(done == std::array<TimeNs, 3>{30'000'000, 30'000'000, 30'000'000});
  CHECK(net.stats().updates == 2);
}

TEST_CASE("random flows on a fat-tree: max-min optimal at every check, bytes conserved") {
  // 4 DGX H100 nodes, leaf uplinks 2:1 oversubscribed so the fabric binds too.
  const auto t = topo::generate_topology(
      "rail-fat-tree", {{"nodes", "4"}, {"node", "dgx-h100"}, {"oversubscription", "2"}});
  sim::Kernel k;
  sim::FlowNetwork net(k, t);
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> gpu(0, t.gpu_count() - 1);
  std::uniform_real_distribution<double> size(1e6, 1e8);
  struct Started {
    sim::FlowId id;
    std::vector<topo::LinkId> route;
  };
  std::vector<Started> flows;
  double expected_link_bytes = 0;
  int finished = 0;
  // 300 flows, arriving every 20 us.
  for (int i = 0; i < 300; ++i) {
    k.schedule_at(i * 20'000, [&, i] {
      int a = gpu(rng);
      int b = gpu(rng);
      if (a == b) b = (b + 1) % t.gpu_count();
      const double bytes = size(rng);
      const auto hash = static_cast<std::uint64_t>(i);
      flows.push_back({net.start_flow(
                           a, b, bytes, [&] { ++finished; }, hash),
                       t.route(a, b, hash)});
      expected_link_bytes += bytes * static_cast<double>(flows.back().route.size());
    });
  }
  // Max-min optimality (Bertsekas & Gallager): every sending flow crosses a
  // saturated link on which no other flow has a higher rate.
  const auto check_max_min = [&] {
    std::vector<double> load(static_cast<std::size_t>(t.link_count()), 0.0);
    std::vector<double> top(static_cast<std::size_t>(t.link_count()), 0.0);
    for (const auto& f : flows) {
      for (const auto l : f.route) {
        load[l] += net.flow_rate_Bps(f.id);
        top[l] = std::max(top[l], net.flow_rate_Bps(f.id));
      }
    }
    int sending = 0;
    for (const auto& f : flows) {
      if (!net.is_sending(f.id)) continue;
      ++sending;
      const double rate = net.flow_rate_Bps(f.id);
      bool bottlenecked = false;
      for (const auto l : f.route) {
        CHECK(load[l] <= net.link_bandwidth_Bps(l) * (1 + 1e-9));
        bottlenecked |=
            load[l] >= net.link_bandwidth_Bps(l) * (1 - 1e-9) && rate >= top[l] * (1 - 1e-9);
      }
      CHECK(bottlenecked);
    }
    CHECK(sending == static_cast<int>(net.active_flows()));
  };
  for (TimeNs at = 1'000'000; at <= 9'000'000; at += 2'000'000) {
    // run_until(at) also runs the network update that events at `at` schedule.
    k.run_until(at);
    check_max_min();
  }
  k.run();
  CHECK(finished == 300);
  double link_bytes = 0;
  for (topo::LinkId l = 0; l < t.link_count(); ++l) link_bytes += net.link_bytes(l);
  CHECK(link_bytes == doctest::Approx(expected_link_bytes).epsilon(1e-9));
}

TEST_CASE("traffic classes share a link by weight, and the rest goes to whoever is left") {
  const auto t = test::star(3, 100e9, 1'000);
  sim::Kernel k;
  sim::FlowNetwork net(k, t);
  core::TrafficWeights w;
  w.weight[static_cast<std::size_t>(core::TrafficClass::GradSync)] = 3;
  net.set_class_weights(w);
  TimeNs done_sync = -1;
  TimeNs done_tenant = -1;
  // Both cross the switch -> GPU 2 link: gradient sync 0.3 GB (weight 3),
  // a pipeline send 1 GB (weight 1).
  const auto a = net.start_flow(
      0, 2, 0.3e9, [&] { done_sync = k.now(); }, 0, core::TrafficClass::GradSync);
  const auto b = net.start_flow(
      1, 2, 1e9, [&] { done_tenant = k.now(); }, 0, core::TrafficClass::Pipeline);
  k.run_until(1'000'000);
  // 100 GB/s by weight 3 : 1 -> 75 and 25 GB/s.
  CHECK(net.flow_rate_Bps(a) == 75e9);
  CHECK(net.flow_rate_Bps(b) == 25e9);
  k.run();
  // Sync: 0.3 GB / 75 GB/s = 4 ms, + 2 us. Pipeline: 0.1 GB sent by then,
  // 0.9 GB at 100 GB/s = 9 ms more -> 13 ms, + 2 us.
  CHECK(done_sync == 4'002'000);
  CHECK(done_tenant == 13'002'000);
}

TEST_CASE("new class weights re-rate the flows already sending") {
  const auto t = test::star(3, 100e9, 1'000);
  sim::Kernel k;
  sim::FlowNetwork net(k, t);
  const auto a = net.start_flow(0, 2, 1e9, {}, 0, core::TrafficClass::GradSync);
  const auto b = net.start_flow(1, 2, 1e9, {}, 0, core::TrafficClass::Tenant);
  k.run_until(1'000'000);
  CHECK(net.flow_rate_Bps(a) == 50e9);
  core::TrafficWeights w;
  w.weight[static_cast<std::size_t>(core::TrafficClass::Tenant)] = 0.25;
  net.set_class_weights(w);
  k.run_until(1'000'001);
  // 1 : 0.25 -> 80 and 20 GB/s.
  CHECK(net.flow_rate_Bps(a) == 80e9);
  CHECK(net.flow_rate_Bps(b) == 20e9);
}

TEST_CASE("a one-link flow crosses that link only") {
  const auto t = test::star(2, 100e9, 1'000);
  sim::Kernel k;
  sim::FlowNetwork net(k, t);
  TimeNs done = -1;
  net.start_link_flow(
      0, 1e9, [&] { done = k.now(); }, core::TrafficClass::Tenant);
  k.run();
  // 1 GB / 100 GB/s = 10 ms, + the one link's 1 us.
  CHECK(done == 10'001'000);
  CHECK(net.link_bytes(0) == doctest::Approx(1e9));
  CHECK(net.link_bytes(1) == 0);
  CHECK_THROWS_AS(net.start_link_flow(t.link_count(), 1e9, {}, core::TrafficClass::Tenant),
                  std::invalid_argument);
  CHECK_THROWS_AS(net.start_link_flow(0, 0, {}, core::TrafficClass::Tenant), std::invalid_argument);
}
