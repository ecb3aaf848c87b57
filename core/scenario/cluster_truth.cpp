#include "core/scenario/cluster_truth.hpp"

#include <cstdio>
#include <utility>

#include "core/scenario/yaml_fields.hpp"

namespace parashift::core {

namespace {

// The factors in file order, for reading and describing.
std::vector<std::pair<const char*, double ClusterTruth::*>> factors() {
  return {{"gemm_efficiency", &ClusterTruth::gemm_efficiency},
          {"attention_efficiency", &ClusterTruth::attention_efficiency},
          {"memory_efficiency", &ClusterTruth::memory_efficiency},
          {"intra_node_bandwidth", &ClusterTruth::intra_node_bandwidth},
          {"inter_node_bandwidth", &ClusterTruth::inter_node_bandwidth}};
}

constexpr double kMaxFactor = 10.0;

}  // namespace

bool ClusterTruth::is_preset() const {
  for (const auto& [name, member] : factors())
    if (this->*member != 1.0) return false;
  return true;
}

DeviceSpec ClusterTruth::device(const DeviceSpec& preset) const {
  DeviceSpec d = preset;
  d.efficiency.gemm_max *= gemm_efficiency;
  d.efficiency.fp8_gemm_max *= gemm_efficiency;
  d.efficiency.attention *= attention_efficiency;
  d.efficiency.memory *= memory_efficiency;
  return d;
}

bool intra_node_link(const topo::Topology& topology, topo::LinkId id) {
  const topo::LinkInfo& link = topology.link(id);
  const int a = topology.node(link.src).host, b = topology.node(link.dst).host;
  return a >= 0 && a == b;
}

topo::Topology ClusterTruth::topology(const topo::Topology& preset) const {
  topo::Topology t = preset;
  if (intra_node_bandwidth == 1.0 && inter_node_bandwidth == 1.0) return t;
  for (topo::LinkId e = 0; e < t.link_count(); ++e) {
    const double factor = intra_node_link(t, e) ? intra_node_bandwidth : inter_node_bandwidth;
    t.set_link_bandwidth(e, t.link(e).bandwidth_Bps * factor);
  }
  return t;
}

std::string ClusterTruth::describe() const {
  std::string out;
  for (const auto& [name, member] : factors()) {
    if (this->*member == 1.0) continue;
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%s %gx", name, this->*member);
    out += (out.empty() ? "" : ", ") + std::string(buffer);
  }
  return out.empty() ? "the preset" : out;
}

ClusterTruth read_cluster_truth(YamlFields& truth) {
  ClusterTruth t;
  for (const auto& [name, member] : factors()) {
    if (!truth.has(name)) {
      truth.allow(name);
      continue;
    }
    const double v = truth.positive_double(name);
    if (v > kMaxFactor) {
      char found[32];
      std::snprintf(found, sizeof found, "%g", v);
      truth.fail(name, "expected a factor on the preset in (0, 10], found " + std::string(found));
    }
    t.*member = v;
  }
  truth.reject_unknown();
  return t;
}

}  // namespace parashift::core
