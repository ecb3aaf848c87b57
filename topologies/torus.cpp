// torus: a 2D or 3D torus of routers, each serving gpus_per_router GPUs.
//
// Router i sits at coordinates (x, y[, z]) with i = x + X*(y + Y*z) and is
// cabled to its +1 neighbour in each dimension with wrap-around. A dimension
// of size 2 has one cable per ring (no duplicate wrap cable); size 1 none.
// GPU j of router i is g<i*gpus_per_router+j>, on host i; routers are r<i>.
#include <string>

#include "topologies/generators.hpp"
#include "topologies/link_model.hpp"
#include "topologies/names.hpp"

namespace parashift::topo {
namespace {

Topology build_torus(const ParamReader& params) {
  const std::vector<int> dims = params.sizes("dims", 2, 3);
  long long routers_ll = 1;
  for (const int d : dims) routers_ll *= d;
  if (routers_ll > (1 << 20)) params.fail("dims", "at most 1048576 routers in all");
  const int routers = static_cast<int>(routers_ll);
  const int gpus_per_router = params.integer("gpus_per_router", 1, 1024);
  const double link_gbps = params.number("link_gbps", 0, true);
  const auto latency_ns = static_cast<std::int64_t>(params.integer("latency_ns", 0, 1'000'000));
  const double injection_gbps = params.given("injection_gbps")
                                    ? params.number("injection_gbps", 0, true)
                                    : link_gbps * 2.0 * static_cast<double>(dims.size());

  Topology t;
  std::vector<int> router(static_cast<std::size_t>(routers));
  for (int i = 0; i < routers; ++i) {
    router[i] = t.add_node(NodeInfo{indexed_name('r', i), NodeKind::Router, -1, i});
    for (int j = 0; j < gpus_per_router; ++j) {
      const int gpu =
          t.add_node(NodeInfo{indexed_name('g', i * gpus_per_router + j), NodeKind::Gpu, -1, i});
      t.add_cable(gpu, router[i], gbps_to_Bps(injection_gbps), latency_ns);
    }
  }
  int stride = 1;
  for (const int size : dims) {
    for (int i = 0; i < routers; ++i) {
      const int coordinate = (i / stride) % size;
      if (size == 1 || (size == 2 && coordinate == 1)) continue;
      const int next = i + ((coordinate + 1) % size - coordinate) * stride;
      t.add_cable(router[i], router[next], gbps_to_Bps(link_gbps), latency_ns);
    }
    stride *= size;
  }
  return t;
}

}  // namespace

GeneratorInfo torus_generator() {
  return GeneratorInfo{
      "torus",
      "2D/3D torus of routers with wrap-around, GPUs attached to routers",
      {
          {"dims", "", "torus sizes, e.g. 8x8 or 4x4x4"},
          {"gpus_per_router", "1", "GPUs attached to each router"},
          {"link_gbps", "400", "router-router cable rate, Gb/s"},
          {"latency_ns", "500", "latency of every link (router hop incl. cable), ns"},
          {"injection_gbps", "2 x dims x link_gbps", "GPU-router cable rate, Gb/s"},
      },
      build_torus};
}

}  // namespace parashift::topo
