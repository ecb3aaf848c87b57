#include "sim/slowdowns.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <random>
#include <unordered_map>

#include "core/input_error.hpp"
#include "core/scenario/cluster_truth.hpp"

namespace parashift::sim {

namespace {

TimeNs until(const core::FaultEvent& e) {
  return e.duration_ns ? e.at_ns + *e.duration_ns : std::numeric_limits<TimeNs>::max();
}

}  // namespace

Slowdowns::Slowdowns(const std::vector<core::FaultEvent>& events, const topo::Topology& topology,
                     std::uint64_t seed)
    : topology_(&topology), seed_(seed) {
  std::unordered_map<std::string, int> link_by_name;
  for (int id = 0; id < topology.link_count(); ++id) link_by_name[topology.link(id).name] = id;
  auto link_id = [&](const core::FaultEvent& e, const std::string& name) {
    const auto it = link_by_name.find(name);
    if (it == link_by_name.end()) {
      throw core::InputError(e.where + ": unknown link '" + name +
                             "' (expected a directed link name such as '" + topology.link(0).name +
                             "'; see parashift topo --dot)");
    }
    return it->second;
  };
  for (const auto& e : events) {
    switch (e.kind) {
      case core::FaultEventKind::Slow:
        if (e.node >= 0) {
          if (e.node >= topology.host_count()) {
            throw core::InputError(e.where + ": node " + std::to_string(e.node) +
                                   " is not in the cluster (0.." +
                                   std::to_string(topology.host_count() - 1) + ")");
          }
          for (int g = 0; g < topology.gpu_count(); ++g)
            if (topology.host_of_gpu(g) == e.node)
              gpu_events_.push_back({g, e.factor, e.at_ns, until(e)});
          break;
        }
        if (e.gpu < 0 || e.gpu >= topology.gpu_count()) {
          throw core::InputError(e.where + ": gpu " + std::to_string(e.gpu) +
                                 " is not in the cluster (0.." +
                                 std::to_string(topology.gpu_count() - 1) + ")");
        }
        gpu_events_.push_back({e.gpu, e.factor, e.at_ns, until(e)});
        break;
      case core::FaultEventKind::Degrade: {
        LinkEvent l{{}, e.fraction, e.at_ns, until(e)};
        if (e.scope.empty()) {
          l.links.push_back(link_id(e, e.link));
        } else {
          const bool intra = e.scope == "intra_node";
          for (int id = 0; id < topology.link_count(); ++id)
            if (core::intra_node_link(topology, id) == intra) l.links.push_back(id);
        }
        link_events_.push_back(std::move(l));
        break;
      }
      case core::FaultEventKind::Background: {
        LinkEvent l{{}, 1.0 - e.fraction, e.at_ns, until(e)};
        for (const auto& name : e.links) l.links.push_back(link_id(e, name));
        link_events_.push_back(std::move(l));
        break;
      }
      case core::FaultEventKind::Tenant: {
        LinkEvent l{{}, 1.0, e.at_ns, until(e)};
        for (const auto& name : e.links) l.links.push_back(link_id(e, name));
        tenant_events_.push_back(std::move(l));
        break;
      }
      case core::FaultEventKind::Jitter:
        sigma_ = e.sigma;
        break;
      case core::FaultEventKind::Fail:
        break;  // fault campaigns (parashift faults)
      case core::FaultEventKind::Kill:
        break;  // SimBackend::step reports it as a failure
    }
  }
}

ClusterState Slowdowns::at(TimeNs now_ns, std::int64_t index) const {
  ClusterState state;
  const int gpus = topology_->gpu_count();
  auto ensure = [&] {
    if (state.gpu_slowdown.empty()) state.gpu_slowdown.assign(gpus, 1.0);
  };
  for (const auto& e : gpu_events_) {
    if (now_ns >= e.from_ns && now_ns < e.until_ns) {
      ensure();
      state.gpu_slowdown[e.gpu] *= e.factor;
    }
  }
  if (sigma_ > 0) {
    // One draw per GPU per iteration, from a generator seeded by (seed, iteration):
    // the same scenario and seed give the same noise.
    ensure();
    std::mt19937_64 rng(seed_ * 0x9e3779b97f4a7c15ULL + static_cast<std::uint64_t>(index));
    std::normal_distribution<double> noise(0.0, sigma_);
    for (double& f : state.gpu_slowdown) f *= std::max(0.5, 1.0 + noise(rng));
  }
  std::map<int, double> keep;
  for (const auto& e : link_events_) {
    if (now_ns < e.from_ns || now_ns >= e.until_ns) continue;
    for (int link : e.links) {
      auto [it, inserted] = keep.emplace(link, 1.0);
      it->second *= e.keep;
    }
  }
  for (const auto& [link, share] : keep) {
    state.link_Bps.emplace_back(link, topology_->link(link).bandwidth_Bps * share);
  }
  for (const auto& e : tenant_events_) {
    if (now_ns < e.from_ns || now_ns >= e.until_ns) continue;
    state.tenant_links.insert(state.tenant_links.end(), e.links.begin(), e.links.end());
  }
  std::sort(state.tenant_links.begin(), state.tenant_links.end());
  state.tenant_links.erase(std::unique(state.tenant_links.begin(), state.tenant_links.end()),
                           state.tenant_links.end());
  return state;
}

}  // namespace parashift::sim
