#include "sim/faults/restore_timer.hpp"

#include <algorithm>
#include <cstdio>

#include "core/snapshot/failure_domains.hpp"
#include "sim/network/snapshot_traffic.hpp"

namespace parashift::sim {

RestoreTimer::RestoreTimer(const topo::Topology& topology, const ClusterSlots& slots,
                           double host_copy_Bps)
    : slots_(&slots),
      host_copy_Bps_(host_copy_Bps),
      network_(std::make_unique<FlowNetwork>(kernel_, topology)) {
  const auto& racks = slots.domains.hosts_of_rack;
  src_host_ = 0;
  const int rack0 = slots.domains.rack_of_host[0];
  const auto& members = racks[static_cast<std::size_t>(rack0)];
  same_rack_host_ = members.size() > 1 && members[1] < slots.topology_hosts
                        ? members[1]
                        : std::min(1, slots.topology_hosts - 1);
  other_rack_host_ = same_rack_host_;
  for (std::size_t r = 0; r < racks.size(); ++r) {
    if (static_cast<int>(r) != rack0 && !racks[r].empty() && racks[r][0] < slots.topology_hosts) {
      other_rack_host_ = racks[r][0];
      break;
    }
  }
}

TimeNs RestoreTimer::transfer_ns(const std::vector<RestoreFlow>& flows) {
  // Class 0: same host (PCIe); 1: same rack; 2: other rack.
  std::vector<std::tuple<int, int, double>> shape;
  for (const auto& f : flows) {
    const auto to = slots_->place_of(f.to_gpu);
    const int cls = to.host == f.from_host ? 0
                    : to.rack == slots_->domains.rack_of_host[static_cast<std::size_t>(f.from_host)]
                        ? 1
                        : 2;
    shape.emplace_back(cls, slots_->local_of_gpu[static_cast<std::size_t>(f.to_gpu)], f.bytes);
  }
  std::sort(shape.begin(), shape.end());
  std::string key;
  for (const auto& [cls, local, bytes] : shape) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%d/%d/%.0f;", cls, local, bytes);
    key += buf;
  }
  if (const auto it = cache_.find(key); it != cache_.end()) return it->second;
  const TimeNs start = kernel_.now();
  TimeNs last = start;
  std::map<int, double> pcie_bytes;  // by local GPU index
  const auto& src_gpus = slots_->gpus_of_host[static_cast<std::size_t>(src_host_)];
  for (const auto& [cls, local, bytes] : shape) {
    if (cls == 0) {
      pcie_bytes[local] += bytes;
      continue;
    }
    const int dst_host = cls == 1 ? same_rack_host_ : other_rack_host_;
    const auto& dst_gpus = slots_->gpus_of_host[static_cast<std::size_t>(dst_host)];
    const auto l = static_cast<std::size_t>(local) % src_gpus.size();
    network_->start_flow(
        src_gpus[l], dst_gpus[l], bytes, [this, &last] { last = std::max(last, kernel_.now()); }, 0,
        core::TrafficClass::Snapshot);
  }
  kernel_.run();
  TimeNs result = last - start;
  for (const auto& [local, bytes] : pcie_bytes) {
    result = std::max(result, core::transfer_ns(bytes, host_copy_Bps_));
  }
  cache_.emplace(key, result);
  return result;
}

TimeNs replication_ns(const topo::Topology& topology, const ClusterSlots& slots, double rank_bytes,
                      int replicas, core::FailureDomain domain, double training_share) {
  std::vector<std::pair<int, int>> pairs;
  for (int g = 0; g < topology.gpu_count(); ++g) {
    const int host = slots.host_of_gpu[static_cast<std::size_t>(g)];
    const auto local = static_cast<std::size_t>(slots.local_of_gpu[static_cast<std::size_t>(g)]);
    for (int peer : core::peer_hosts(slots.domains, host, replicas - 1, domain)) {
      // A spare host is timed as the first host of its rack (same cabling).
      if (peer >= slots.topology_hosts) {
        const auto rack =
            static_cast<std::size_t>(slots.domains.rack_of_host[static_cast<std::size_t>(peer)]);
        peer = slots.domains.hosts_of_rack[rack].front();
      }
      const auto& dst = slots.gpus_of_host[static_cast<std::size_t>(peer)];
      pairs.emplace_back(g, dst[local % dst.size()]);
    }
  }
  return replication_alone_ns(topology, {}, pairs, rank_bytes, training_share);
}

}  // namespace parashift::sim
