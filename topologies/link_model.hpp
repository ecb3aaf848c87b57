// Link rates and latencies the generators use, in one place.
//
// Latency is charged per directed link, so a path's latency is the sum over
// its links:
//   GPU -> NVSwitch -> GPU                      2 x 350         = 0.7 us
//   GPU -> NIC -> leaf -> NIC -> GPU            2 x 1000 + 2 x 300 = 2.6 us
//   ... via a spine (2 more cables)                               = 3.2 us
//   ... via a core (4 more cables)                                = 3.8 us
#pragma once

#include <cstdint>

namespace parashift::topo {

constexpr double gbps_to_Bps(double gigabits_per_s) {
  return gigabits_per_s * 1e9 / 8.0;
}
constexpr double gigabytes_to_Bps(double gigabytes_per_s) {
  return gigabytes_per_s * 1e9;
}

/// GPU <-> NVSwitch, one direction: NVLink serdes plus half a switch traversal.
inline constexpr std::int64_t kNvlinkLatency_ns = 350;
/// GPU <-> NIC, one direction: PCIe plus NIC processing (GPUDirect RDMA).
inline constexpr std::int64_t kNicLatency_ns = 1000;
/// NIC <-> switch and switch <-> switch cable, one direction: ~100 ns of
/// cable (about 20 m) plus half of a ~400 ns InfiniBand switch traversal at
/// each end, so one switch hop costs ~600 ns.
inline constexpr std::int64_t kCableLatency_ns = 300;

}  // namespace parashift::topo
