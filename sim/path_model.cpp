#include "sim/path_model.hpp"

#include <limits>

namespace parashift::sim {

void PathModel::set_link_overrides(const std::vector<std::pair<int, double>>& link_Bps) {
  overrides_ = link_Bps;
  override_by_link_.clear();
  for (const auto& [link, bandwidth] : link_Bps) override_by_link_[link] = bandwidth;
  cache_.clear();
}

double PathModel::link_Bps(int link) const {
  const auto it = override_by_link_.find(link);
  return it != override_by_link_.end() ? it->second : topology_->link(link).bandwidth_Bps;
}

const PathInfo& PathModel::path(int gpu_a, int gpu_b) const {
  const std::uint64_t key = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(gpu_a)) << 32) |
                            static_cast<std::uint32_t>(gpu_b);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  PathInfo info;
  if (gpu_a != gpu_b) {
    info.bottleneck_Bps = std::numeric_limits<double>::infinity();
    for (const topo::LinkId id : topology_->route(gpu_a, gpu_b, key)) {
      const auto& link = topology_->link(id);
      const auto o = override_by_link_.find(id);
      const double bandwidth = o == override_by_link_.end() ? link.bandwidth_Bps : o->second;
      info.bottleneck_Bps = std::min(info.bottleneck_Bps, bandwidth);
      info.latency_ns += link.latency_ns;
      ++info.hops;
    }
  }
  return cache_.emplace(key, info).first->second;
}

TimeNs PathModel::transfer_ns(int gpu_a, int gpu_b, double bytes) const {
  if (gpu_a == gpu_b || bytes <= 0) return 0;
  const PathInfo& p = path(gpu_a, gpu_b);
  return core::transfer_ns(bytes, p.bottleneck_Bps) + p.latency_ns;
}

}  // namespace parashift::sim
