// NodeKind spelling in files and messages.
#include <array>
#include <utility>

#include "topologies/topology.hpp"

namespace parashift::topo {
namespace {

constexpr std::array<std::pair<NodeKind, std::string_view>, 7> kKindNames{{
    {NodeKind::Gpu, "gpu"},
    {NodeKind::NvSwitch, "nvswitch"},
    {NodeKind::Nic, "nic"},
    {NodeKind::Leaf, "leaf"},
    {NodeKind::Spine, "spine"},
    {NodeKind::Core, "core"},
    {NodeKind::Router, "router"},
}};

}  // namespace

std::string_view to_string(NodeKind kind) {
  for (const auto& [k, name] : kKindNames) {
    if (k == kind) return name;
  }
  return "unknown";
}

std::optional<NodeKind> parse_node_kind(std::string_view text) {
  for (const auto& [k, name] : kKindNames) {
    if (name == text) return k;
  }
  return std::nullopt;
}

}  // namespace parashift::topo
