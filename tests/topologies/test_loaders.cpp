// DOT and GraphML loading: good files, every error, and write_dot round trips.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

#include "tests/temp_dir.hpp"
#include "topo_test_util.hpp"

namespace parashift::topo {
namespace {

using test::data_file;
using test::error_of;
using test::hops;

using Names = std::vector<std::string>;

std::string load_error(const std::string& name) {
  return error_of([&] { load_topology(data_file(name)); });
}

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

// Writes `t` as DOT to a temporary file and loads it back.
Topology round_trip(const Topology& t, const std::string& name) {
  const auto path = parashift::test::process_temp_dir().file(name + ".dot");
  {
    std::ofstream out(path);
    write_dot(t, out);
  }
  Topology loaded = load_topology(path);
  std::filesystem::remove(path);
  return loaded;
}

// Same GPUs, hosts, link multiset and route lengths/latencies for all pairs.
void check_same(const Topology& a, const Topology& b) {
  REQUIRE(a.node_count() == b.node_count());
  REQUIRE(a.link_count() == b.link_count());
  REQUIRE(a.gpu_count() == b.gpu_count());
  CHECK(a.host_count() == b.host_count());
  CHECK(a.gpus_per_host() == b.gpus_per_host());
  const auto signature = [](const Topology& t) {
    std::multiset<std::tuple<std::string, std::string, double, std::int64_t>> links;
    for (const LinkInfo& l : t.links()) {
      links.emplace(t.node(l.src).name, t.node(l.dst).name, l.bandwidth_Bps, l.latency_ns);
    }
    return links;
  };
  CHECK(signature(a) == signature(b));
  for (int g = 0; g < a.gpu_count(); ++g) {
    CHECK(a.node(a.gpu_node(g)).name == b.node(b.gpu_node(g)).name);
    CHECK(a.host_of_gpu(g) == b.host_of_gpu(g));
  }
  const auto latency = [](const Topology& t, const std::vector<LinkId>& path) {
    std::int64_t sum = 0;
    for (const LinkId e : path) sum += t.link(e).latency_ns;
    return sum;
  };
  for (int x = 0; x < a.gpu_count(); ++x) {
    for (int y = 0; y < a.gpu_count(); ++y) {
      const auto pa = a.route(x, y);
      const auto pb = b.route(x, y);
      if (pa.size() != pb.size() || latency(a, pa) != latency(b, pb)) {
        FAIL_CHECK("route " << x << " -> " << y << " differs");
      }
    }
  }
}

TEST_CASE("load a DOT file: kinds - natural GPU order - inferred hosts - both rate units") {
  const Topology t = load_topology(data_file("tiny.dot"));
  // 4 GPUs + 2 NVSwitches + 4 NICs + 1 leaf = 11 nodes; 4 + 4 + 4 cables = 24 links.
  CHECK(t.node_count() == 11);
  CHECK(t.link_count() == 24);
  REQUIRE(t.gpu_count() == 4);
  CHECK(t.node(t.gpu_node(0)).name == "gpu1");
  CHECK(t.node(t.gpu_node(1)).name == "gpu2");
  CHECK(t.node(t.gpu_node(2)).name == "gpu10");
  CHECK(t.node(t.gpu_node(3)).name == "gpu11");
  CHECK(t.host_count() == 2);
  CHECK(t.gpus_per_host() == 2);
  CHECK(t.host_of_gpu(1) == 0);
  CHECK(t.host_of_gpu(2) == 1);
  const auto inside = t.route(0, 1);
  CHECK(hops(t, inside) == Names{"nvs_a", "gpu2"});
  CHECK(t.link(inside[0]).bandwidth_Bps == doctest::Approx(300e9));  // 2400 Gb/s
  const auto across = t.route(0, 2);
  CHECK(hops(t, across) == Names{"nic1", "leaf", "nic10", "gpu10"});
  CHECK(t.link(across[0]).bandwidth_Bps == doctest::Approx(25e9));  // bandwidth_Bps
  CHECK(t.link(across[1]).bandwidth_Bps == doctest::Approx(25e9));  // 200 Gb/s
  CHECK(t.node(t.link(across[0]).dst).host == 0);  // NIC host inferred from its GPU
}

TEST_CASE("load a GraphML file: typed keys - defaults - explicit hosts and GPU indices") {
  const Topology t = load_topology(data_file("tiny.graphml"));
  CHECK(t.node_count() == 5);
  CHECK(t.link_count() == 8);
  REQUIRE(t.gpu_count() == 2);
  CHECK(t.node(t.gpu_node(0)).name == "b");
  CHECK(t.host_of_gpu(0) == 0);
  CHECK(t.host_of_gpu(1) == 1);
  const auto path = t.route(0, 1);
  CHECK(hops(t, path) == Names{"nic_b", "sw", "nic_a", "a"});
  // GPU-NIC 1000 ns given; NIC-leaf 300 ns from the key's default.
  CHECK(t.link(path[0]).latency_ns == 1000);
  CHECK(t.link(path[1]).latency_ns == 300);
  CHECK(t.link(path[1]).bandwidth_Bps == doctest::Approx(50e9));
}

TEST_CASE("loader errors name file and element and say what was expected") {
  const auto file = [](const std::string& name) { return data_file(name) + ": "; };
  CHECK(error_of([] { load_topology(data_file("no_such_file.dot")); }) ==
        data_file("no_such_file.dot") + ": cannot open topology file (no such file)");
  CHECK(error_of([] { load_topology(data_file("tiny.txt")); }) ==
        data_file("tiny.txt") +
            ": unknown topology file extension '.txt'; expected .dot, .gv or .graphml");
  // The unclosed attribute list opens on line 2; lines 1-2 closed by "}" no
  // longer parse, line 1 alone does.
  CHECK(starts_with(load_error("syntax_error.dot"),
                    data_file("syntax_error.dot") + ":2: Graphviz syntax error: "));
  // A comment, a header, three good statements, then `g0 -- ;` on line 6.
  CHECK(starts_with(load_error("syntax_error_late.dot"),
                    data_file("syntax_error_late.dot") + ":6: Graphviz syntax error: "));
  CHECK(load_error("dangling_edge.dot") ==
        file("dangling_edge.dot") +
            "node 'sw2': missing attribute 'kind'; expected one of gpu, nvswitch, nic, leaf, "
            "spine, core, router (a node named only in an edge must still be declared with a "
            "kind)");
  CHECK(load_error("missing_bandwidth.dot") ==
        file("missing_bandwidth.dot") +
            "edge 'g1' -- 'sw': missing attribute 'bandwidth_gbps' (or 'bandwidth_Bps'); "
            "expected a rate > 0");
  CHECK(load_error("bad_latency.dot") ==
        file("bad_latency.dot") +
            "edge 'g0' -> 'g1': latency_ns 'fast' is invalid; expected whole nanoseconds >= 0");
  CHECK(load_error("unknown_kind.dot") ==
        file("unknown_kind.dot") +
            "node 't0': kind 'tpu' is unknown; expected one of gpu, nvswitch, nic, leaf, spine, "
            "core, router");
  CHECK(load_error("bad_host.dot") ==
        file("bad_host.dot") + "node 'g0': host 'two' is invalid; expected an integer >= 0");
  CHECK(load_error("disconnected.dot") ==
        file("disconnected.dot") +
            "GPU 'g0' cannot reach GPU 'g1'; expected every GPU to reach every other (GPUs do "
            "not forward traffic)");
  CHECK(load_error("gpu_bridge.dot") ==
        file("gpu_bridge.dot") +
            "GPU 'g1' cannot reach GPU 'g2'; expected every GPU to reach every other (GPUs do "
            "not forward traffic)");
  CHECK(load_error("no_gpus.dot") ==
        file("no_gpus.dot") + "no GPU (no node of kind gpu); expected at least one");
  const std::string xml = load_error("syntax_error.graphml");
  CHECK(starts_with(xml, data_file("syntax_error.graphml") + ":"));
  CHECK(xml.find("XML syntax error") != std::string::npos);
  CHECK(load_error("dangling_edge.graphml") ==
        file("dangling_edge.graphml") +
            "edge 'g0' -> 'g9': node 'g9' is not declared; expected a <node id=\"g9\">");
  CHECK(load_error("missing_latency.graphml") ==
        file("missing_latency.graphml") +
            "edge 'g0' -- 'sw': missing attribute 'latency_ns'; expected whole nanoseconds >= 0");
}

TEST_CASE("validate: host layout errors") {
  Topology t;
  const int a = t.add_node({"a", NodeKind::Gpu, -1, 0});
  const int b = t.add_node({"b", NodeKind::Gpu, -1, 1});
  const int c = t.add_node({"c", NodeKind::Gpu, -1, 1});
  const int sw = t.add_node({"sw", NodeKind::Leaf});
  for (const int g : {a, b, c}) t.add_cable(g, sw, 1e9, 10);
  CHECK(error_of([&] { t.validate("x.dot"); }) ==
        "x.dot: host 1 (GPU 'b') has 2 GPUs but host 0 has 1; expected the same number of GPUs "
        "on every host");
  Topology gap;
  gap.add_node({"a", NodeKind::Gpu, 1});
  CHECK(error_of([&] { gap.validate(); }) ==
        "topology: no GPU has index 0; expected GPU indices 0..1 without gaps");
}

TEST_CASE("write_dot round trip: generated cables") {
  const Topology t = generate_topology("rail-fat-tree",
                                       {{"nodes", "3"}, {"tiers", "3"}, {"oversubscription", "3"}});
  std::ostringstream text;
  write_dot(t, text);
  CHECK(text.str().find("graph parashift {") != std::string::npos);
  CHECK(text.str().find("gpu=") == std::string::npos);  // natural order = index order
  check_same(t, round_trip(t, "rail"));
  check_same(
      generate_topology("torus", {{"dims", "3x3"}, {"gpus_per_router", "2"}}),
      round_trip(generate_topology("torus", {{"dims", "3x3"}, {"gpus_per_router", "2"}}), "torus"));
}

TEST_CASE("write_dot round trip: one-way links - odd names - explicit GPU indices") {
  Topology t;
  const int a = t.add_node({"gpu-b", NodeKind::Gpu});     // GPU 0, sorts after "gpu-a"
  const int b = t.add_node({"gpu-a", NodeKind::Gpu});     // GPU 1
  const int r1 = t.add_node({"node", NodeKind::Router});  // a DOT keyword
  const int r2 = t.add_node({"r \"2\"", NodeKind::Router});
  t.add_link(a, r1, 1e9, 10);
  t.add_link(r1, b, 1e9, 10);
  t.add_link(b, r2, 2e9 / 3, 7);  // not a whole number of B/s
  t.add_link(r2, a, 2e9 / 3, 7);
  t.validate();
  std::ostringstream text;
  write_dot(t, text);
  CHECK(text.str().find("digraph parashift {") != std::string::npos);
  CHECK(text.str().find("gpu=") != std::string::npos);
  const Topology back = round_trip(t, "digraph");
  check_same(t, back);
  CHECK(back.route(0, 1).size() == 2);
  CHECK(back.link(back.route(1, 0)[0]).bandwidth_Bps == 2e9 / 3);  // exact
}

}  // namespace
}  // namespace parashift::topo
