#include "sim/link_window.hpp"

#include <algorithm>

namespace parashift::sim {

void LinkWindow::open(const FlowNetwork& network, int owner) {
  owner_ = owner;
  const int links = network.topology().link_count();
  bytes_.resize(static_cast<std::size_t>(links));
  own_bytes_.resize(static_cast<std::size_t>(links));
  busy_ns_.resize(static_cast<std::size_t>(links));
  for (topo::LinkId id = 0; id < links; ++id) {
    const auto l = static_cast<std::size_t>(id);
    bytes_[l] = network.link_bytes(id);
    own_bytes_[l] = network.link_owner_bytes(id, owner);
    busy_ns_[l] = network.link_busy_ns(id);
  }
}

std::vector<LinkUse> LinkWindow::close(const FlowNetwork& network) const {
  std::vector<LinkUse> uses;
  for (topo::LinkId id = 0; id < static_cast<topo::LinkId>(bytes_.size()); ++id) {
    const auto l = static_cast<std::size_t>(id);
    const double bytes = network.link_bytes(id) - bytes_[l];
    if (bytes <= 0) continue;
    const double own = network.link_owner_bytes(id, owner_) - own_bytes_[l];
    // Rounding can leave the difference a hair below zero.
    uses.push_back({id, bytes, network.link_busy_ns(id) - busy_ns_[l], std::max(0.0, bytes - own)});
  }
  return uses;
}

}  // namespace parashift::sim
