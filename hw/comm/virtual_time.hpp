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
// Every rank has a link to every other, all at the same rate until a
// degrade names one ("r1->r2"); a ring collective runs around its group in
// rank order at its slowest edge's rate. Links are not shared: two messages
// at once each get the whole rate. A degraded span (VirtualLink::degrades)
// prices a collective at the rate when its last member arrives, a message
// at the rate when it was sent. Each rank books what its outgoing links
// carried (EdgeLedger), the executor's link telemetry.
// A run's times therefore depend on the work done and the bytes sent, never
// on the machine, its load or the sanitizer it runs under, and they have a
// critical path (a pipeline waits for its slow stage, a collective for its
// slow member), which counted compute alone does not. Host buffers only:
// the clock travels inside each message's payload.
#pragma once

#include <limits>
#include <map>
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
/// (a scenario's degrade event): every rank's link, or the one from world
/// rank `from_rank` to `to_rank` (a link named "r1->r2").
struct VirtualDegrade {
  core::TimeNs from_ns = 0;
  core::TimeNs until_ns = std::numeric_limits<core::TimeNs>::max();
  double fraction = 1;
  int from_rank = -1;  // -1: every link
  int to_rank = -1;
};

/// The modelled link: each rank has one to every other (one direction),
/// all alike until a degrade names one.
struct VirtualLink {
  double Bps = 10e9;               // 10 GB/s
  core::TimeNs latency_ns = 5000;  // per ring step or message
  std::vector<VirtualDegrade> degrades = {};
  /// The links as they run at `t_ns`: Bps times the fractions of the
  /// degrades of every link holding then.
  VirtualLink at(core::TimeNs t_ns) const;
  /// The rate at `t_ns` of the link from world rank `from` to `to`: Bps
  /// times the fractions holding then on every link or on that one.
  double Bps_between(core::TimeNs t_ns, int from, int to) const;
};

/// What one rank's outgoing link to one peer carried in a step: the bytes
/// on the wire and the time it was busy sending them.
struct EdgeUse {
  double bytes = 0;
  core::TimeNs busy_ns = 0;
};
/// A rank's outgoing links, by the receiving world rank (shared by every
/// group split from one VirtualTimeCommunicator).
using EdgeLedger = std::map<int, EdgeUse>;

/// The time of one collective of `bytes` (nccl-tests' buffer size) over
/// `ranks` on `link`; 0 for one rank. SendRecv: one message.
core::TimeNs virtual_collective_ns(core::CollectiveKind kind, double bytes, int ranks,
                                   const VirtualLink& link);

/// Forwards every call to `inner` and keeps `clock` as described above.
/// Groups split from it share the clock, the link and the ledger. A ring
/// collective (all-reduce, all-gather, reduce-scatter) runs around the
/// group in its rank order, at the rate of its slowest edge (member k to
/// k + 1, k = size - 1 to 0); each member books its outgoing edge.
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

  /// The world rank of each member, by rank in this group.
  const std::vector<int>& world_ranks() const { return world_; }
  /// This rank's outgoing links since clear_edges() (every group's).
  const EdgeLedger& edges() const { return *ledger_; }
  void clear_edges() { ledger_->clear(); }
  const VirtualLink& link() const { return link_; }
  VirtualClock& clock() const { return clock_; }

 private:
  VirtualTimeCommunicator(std::unique_ptr<Communicator> owned, VirtualClock& clock,
                          VirtualLink link, std::vector<int> world,
                          std::shared_ptr<EdgeLedger> ledger);
  void book(int to_member, double bytes, core::TimeNs busy_ns);
  // Every member's clock to the group's latest, then the collective's time.
  void collective(core::CollectiveKind kind, double bytes);
  // A message from member `peer` sent at `sent_ns`: the clock reaches its arrival.
  void arrived(int peer, core::TimeNs sent_ns, double bytes);
  // A message to member `peer` sent now: booked on that edge.
  void book_send(int peer, double bytes);

  std::unique_ptr<Communicator> owned_;
  Communicator* inner_;
  VirtualClock& clock_;
  VirtualLink link_;
  std::vector<int> world_;  // by member
  std::shared_ptr<EdgeLedger> ledger_;
};

}  // namespace parashift::hw
