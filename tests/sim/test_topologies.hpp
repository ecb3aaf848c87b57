// Small hand-built topologies whose numbers tests can derive by hand.
#pragma once

#include "core/model_spec.hpp"
#include "topologies/topology.hpp"

namespace parashift::test {

/// `gpus` GPUs on one switch; every cable `bandwidth_Bps` per direction and
/// `latency_ns`, so any GPU pair is 2 links apart: bandwidth_Bps, 2 * latency_ns.
inline topo::Topology star(int gpus, double bandwidth_Bps, std::int64_t latency_ns) {
  topo::Topology t;
  const int sw = t.add_node({"sw", topo::NodeKind::NvSwitch, -1, 0});
  for (int g = 0; g < gpus; ++g) {
    const int v = t.add_node({"gpu" + std::to_string(g), topo::NodeKind::Gpu, g, 0});
    t.add_cable(v, sw, bandwidth_Bps, latency_ns);
  }
  t.validate("star");
  return t;
}

/// A small transformer whose shape only matters for memory figures: tests
/// that use it give the simulator an arithmetic work profile.
inline core::ModelSpec synthetic_model(int layers) {
  core::ModelSpec m;
  m.name = "synthetic";
  m.layers = layers;
  m.hidden = 1024;
  m.heads = 8;
  m.kv_heads = 8;
  m.ffn_hidden = 4096;
  m.vocab = 1000;
  return m;
}

}  // namespace parashift::test
