// The coordinates in a communication group's name as StepReport carries
// it (sim::group_comm, the executor): "tp[stage 3, replica 0]",
// "dp[stage 2]", "dp[stage 2, cp 1]".
#pragma once

#include <charconv>
#include <cstddef>
#include <string_view>
#include <system_error>

namespace parashift::core {

// A group name's coordinates: "tp[stage 3, replica 0]", "dp[stage 2]",
// "dp[stage 2, cp 1]". Parsed by hand (per group, per report: 4,096 names
// at 16K GPUs); -1 for a field absent or another prefix.
struct GroupName {
  int stage = -1;
  int replica = -1;
};

inline GroupName parse_group(std::string_view name, std::string_view prefix) {
  GroupName g;
  auto number = [&](std::string_view key) {
    if (name.substr(0, key.size()) != key) return -1;
    name.remove_prefix(key.size());
    int v = -1;
    const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), v);
    if (ec != std::errc()) return -1;
    name.remove_prefix(static_cast<std::size_t>(end - name.data()));
    return v;
  };
  if (name.substr(0, prefix.size()) != prefix) return g;
  name.remove_prefix(prefix.size());
  g.stage = number("[stage ");
  if (g.stage >= 0) g.replica = number(", replica ");
  return g;
}

}  // namespace parashift::core
