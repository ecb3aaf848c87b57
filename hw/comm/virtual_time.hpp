// Virtual time for the CPU executor (SMPI's online-simulation idea in its
// simplest form): the ranks run the real code on real buffers, but the time
// they report is not the machine's. Each rank keeps a VirtualClock that its
// counted compute advances (HwOptions::virtual_clock, ComputeClock::Counted),
// and a VirtualTimeCommunicator around its group prices every message on a
// modelled link:
//   - a collective over p ranks starts when its last member arrives (the
//     members' clocks are reduced to their maximum) and takes
//     steps x latency + bytes x nccl_bus_factor(kind, p) / Bps
//     (ring steps: 2(p-1) for an all-reduce, p-1 for a gather or a scatter);
//   - a message carries its sender's clock; the receiver's clock becomes at
//     least that + latency + bytes / Bps. A send itself costs the sender
//     nothing (buffered, as a DMA engine takes it).
// Links are not shared: two messages at once each get the whole rate. A
// degraded span (VirtualLink::degrades) prices a collective at the rate
// when its last member arrives, a message at the rate when it was sent.
// A run's times therefore depend on the work done and the bytes sent, never
// on the machine, its load or the sanitizer it runs under, and they have a
// critical path (a pipeline waits for its slow stage, a collective for its
// slow member), which counted compute alone does not. Host buffers only:
// the clock travels inside each message's payload.
#pragma once

#include <limits>
#include <memory>
#include <vector>

#include "core/cost/work_profile.hpp"
#include "core/units.hpp"
#include "hw/comm/communicator.hpp"

namespace parashift::hw {

class VirtualClock {
 public:
  core::TimeNs now_ns() const { return now_ns_; }
  void advance(core::TimeNs ns) { now_ns_ += ns; }
  void reach(core::TimeNs at_ns) {
    if (at_ns > now_ns_) now_ns_ = at_ns;
  }

 private:
  core::TimeNs now_ns_ = 0;
};

/// A span of virtual time in which the link runs at `fraction` of its rate
/// (a scenario's degrade event: every message crosses the one link).
struct VirtualDegrade {
  core::TimeNs from_ns = 0;
  core::TimeNs until_ns = std::numeric_limits<core::TimeNs>::max();
  double fraction = 1;
};

/// The modelled link every message crosses (one direction, per rank).
struct VirtualLink {
  double Bps = 10e9;               // 10 GB/s
  core::TimeNs latency_ns = 5000;  // per ring step or message
  std::vector<VirtualDegrade> degrades = {};
  /// The link as it runs at `t_ns`: Bps times the fractions holding then.
  VirtualLink at(core::TimeNs t_ns) const;
};

/// The time of one collective of `bytes` (nccl-tests' buffer size) over
/// `ranks` on `link`; 0 for one rank. SendRecv: one message.
core::TimeNs virtual_collective_ns(core::CollectiveKind kind, double bytes, int ranks,
                                   const VirtualLink& link);

/// Forwards every call to `inner` and keeps `clock` as described above.
/// Groups split from it share the clock and the link.
class VirtualTimeCommunicator : public Communicator {
 public:
  VirtualTimeCommunicator(Communicator& inner, VirtualClock& clock, VirtualLink link);
  VirtualTimeCommunicator(std::unique_ptr<Communicator> owned, VirtualClock& clock,
                          VirtualLink link);

  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  void all_reduce_sum(std::span<float> data) override;
  void all_reduce_sum(std::span<double> data) override;
  void all_reduce_max(std::span<double> data) override;
  std::vector<double> all_gather(std::span<const double> mine) override;
  void all_gather(std::span<const float> mine, std::span<float> all) override;
  void reduce_scatter_sum(std::span<const float> all, std::span<float> mine) override;
  void barrier() override;
  void send(std::span<const float> data, int peer, int tag) override;
  void recv(std::span<float> data, int peer, int tag) override;
  void send_bytes(std::span<const std::byte> data, int peer, int tag) override;
  std::vector<std::byte> recv_bytes(int peer, int tag) override;
  void flush_sends() override { inner_->flush_sends(); }
  void post_sends() override { inner_->post_sends(); }
  std::unique_ptr<Communicator> split(int color, int key) override;

 private:
  // Every member's clock to the group's latest, then the collective's time.
  void collective(core::CollectiveKind kind, double bytes);
  void arrived(core::TimeNs sent_ns, double bytes);

  std::unique_ptr<Communicator> owned_;
  Communicator* inner_;
  VirtualClock& clock_;
  VirtualLink link_;
};

}  // namespace parashift::hw
