#include "hw/comm/virtual_time.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "core/cost/nccl_model.hpp"
#include "hw/hw_error.hpp"

namespace parashift::hw {

namespace {

// A message's payload is followed by its sender's clock, bit for bit.
constexpr std::size_t kStampFloats = sizeof(core::TimeNs) / sizeof(float);
static_assert(kStampFloats * sizeof(float) == sizeof(core::TimeNs));

}  // namespace

core::TimeNs virtual_collective_ns(core::CollectiveKind kind, double bytes, int ranks,
                                   const VirtualLink& link) {
  if (ranks <= 1) return 0;
  const int steps = kind == core::CollectiveKind::SendRecv    ? 1
                    : kind == core::CollectiveKind::AllReduce ? 2 * (ranks - 1)
                                                              : ranks - 1;
  return steps * link.latency_ns +
         static_cast<core::TimeNs>(
             std::llround(bytes * core::nccl_bus_factor(kind, ranks) / link.Bps * 1e9));
}

VirtualLink VirtualLink::at(core::TimeNs t_ns) const {
  VirtualLink now{Bps, latency_ns};
  for (const VirtualDegrade& d : degrades)
    if (d.from_rank < 0 && t_ns >= d.from_ns && t_ns < d.until_ns) now.Bps *= d.fraction;
  return now;
}

double VirtualLink::Bps_between(core::TimeNs t_ns, int from, int to) const {
  double rate = Bps;
  for (const VirtualDegrade& d : degrades)
    if ((d.from_rank < 0 || (d.from_rank == from && d.to_rank == to)) && t_ns >= d.from_ns &&
        t_ns < d.until_ns)
      rate *= d.fraction;
  return rate;
}

namespace {

std::vector<int> identity(int n) {
  std::vector<int> out(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) out[static_cast<std::size_t>(k)] = k;
  return out;
}

}  // namespace

// The communicator given is the world: its ranks are the world ranks.
VirtualTimeCommunicator::VirtualTimeCommunicator(Communicator& inner, VirtualClock& clock,
                                                 VirtualLink link)
    : inner_(&inner),
      clock_(clock),
      link_(std::move(link)),
      world_(identity(inner.size())),
      ledger_(std::make_shared<EdgeLedger>()) {}

VirtualTimeCommunicator::VirtualTimeCommunicator(std::unique_ptr<Communicator> owned,
                                                 VirtualClock& clock, VirtualLink link)
    : owned_(std::move(owned)),
      inner_(owned_.get()),
      clock_(clock),
      link_(std::move(link)),
      world_(identity(inner_->size())),
      ledger_(std::make_shared<EdgeLedger>()) {}

VirtualTimeCommunicator::VirtualTimeCommunicator(std::unique_ptr<Communicator> owned,
                                                 VirtualClock& clock, VirtualLink link,
                                                 std::vector<int> world,
                                                 std::shared_ptr<EdgeLedger> ledger)
    : owned_(std::move(owned)),
      inner_(owned_.get()),
      clock_(clock),
      link_(std::move(link)),
      world_(std::move(world)),
      ledger_(std::move(ledger)) {}

void VirtualTimeCommunicator::book(int to_member, double bytes, core::TimeNs busy_ns) {
  EdgeUse& use = (*ledger_)[world_[static_cast<std::size_t>(to_member)]];
  use.bytes += bytes;
  use.busy_ns += busy_ns;
}

void VirtualTimeCommunicator::collective(core::CollectiveKind kind, double bytes) {
  const int p = inner_->size();
  if (p <= 1) return;
  double latest = static_cast<double>(clock_.now_ns());  // exact below 2^53 ns (104 days)
  inner_->all_reduce_max(std::span<double>(&latest, 1));
  clock_.reach(static_cast<core::TimeNs>(latest));
  // Around the ring in rank order, at its slowest edge's rate.
  const core::TimeNs t = clock_.now_ns();
  VirtualLink ring = link_.at(t);
  for (int k = 0; k < p; ++k)
    ring.Bps = std::min(ring.Bps, link_.Bps_between(t, world_[static_cast<std::size_t>(k)],
                                                    world_[static_cast<std::size_t>((k + 1) % p)]));
  const core::TimeNs ns = virtual_collective_ns(kind, bytes, p, ring);
  clock_.advance(ns);
  if (bytes > 0) book((inner_->rank() + 1) % p, bytes * core::nccl_bus_factor(kind, p), ns);
}

void VirtualTimeCommunicator::arrived(int peer, core::TimeNs sent_ns, double bytes) {
  const VirtualLink edge{link_.Bps_between(sent_ns, world_[static_cast<std::size_t>(peer)],
                                           world_[static_cast<std::size_t>(inner_->rank())]),
                         link_.latency_ns};
  clock_.reach(sent_ns + virtual_collective_ns(core::CollectiveKind::SendRecv, bytes, 2, edge));
}

void VirtualTimeCommunicator::book_send(int peer, double bytes) {
  const core::TimeNs t = clock_.now_ns();
  const VirtualLink edge{link_.Bps_between(t, world_[static_cast<std::size_t>(inner_->rank())],
                                           world_[static_cast<std::size_t>(peer)]),
                         link_.latency_ns};
  book(peer, bytes, virtual_collective_ns(core::CollectiveKind::SendRecv, bytes, 2, edge));
}

void VirtualTimeCommunicator::all_reduce_sum(std::span<float> data) {
  collective(core::CollectiveKind::AllReduce, static_cast<double>(data.size_bytes()));
  inner_->all_reduce_sum(data);
}
void VirtualTimeCommunicator::all_reduce_sum(std::span<double> data) {
  collective(core::CollectiveKind::AllReduce, static_cast<double>(data.size_bytes()));
  inner_->all_reduce_sum(data);
}
void VirtualTimeCommunicator::all_reduce_max(std::span<double> data) {
  collective(core::CollectiveKind::AllReduce, static_cast<double>(data.size_bytes()));
  inner_->all_reduce_max(data);
}
std::vector<double> VirtualTimeCommunicator::all_gather(std::span<const double> mine) {
  collective(core::CollectiveKind::AllGather,
             static_cast<double>(mine.size_bytes()) * inner_->size());
  return inner_->all_gather(mine);
}
void VirtualTimeCommunicator::all_gather(std::span<const float> mine, std::span<float> all) {
  collective(core::CollectiveKind::AllGather, static_cast<double>(all.size_bytes()));
  inner_->all_gather(mine, all);
}
void VirtualTimeCommunicator::reduce_scatter_sum(std::span<const float> all,
                                                 std::span<float> mine) {
  collective(core::CollectiveKind::ReduceScatter, static_cast<double>(all.size_bytes()));
  inner_->reduce_scatter_sum(all, mine);
}
void VirtualTimeCommunicator::barrier() {
  collective(core::CollectiveKind::AllReduce, 0);
  inner_->barrier();
}

void VirtualTimeCommunicator::send(std::span<const float> data, int peer, int tag) {
  std::vector<float> stamped(data.size() + kStampFloats);
  std::copy(data.begin(), data.end(), stamped.begin());
  const core::TimeNs now = clock_.now_ns();
  std::memcpy(stamped.data() + data.size(), &now, sizeof now);
  inner_->send(stamped, peer, tag);
  book_send(peer, static_cast<double>(data.size_bytes()));
}

void VirtualTimeCommunicator::recv(std::span<float> data, int peer, int tag) {
  std::vector<float> stamped(data.size() + kStampFloats);
  inner_->recv(stamped, peer, tag);
  std::copy(stamped.begin(), stamped.begin() + static_cast<std::ptrdiff_t>(data.size()),
            data.begin());
  core::TimeNs sent = 0;
  std::memcpy(&sent, stamped.data() + data.size(), sizeof sent);
  arrived(peer, sent, static_cast<double>(data.size_bytes()));
}

void VirtualTimeCommunicator::send_bytes(std::span<const std::byte> data, int peer, int tag) {
  std::vector<std::byte> stamped(sizeof(core::TimeNs) + data.size());
  const core::TimeNs now = clock_.now_ns();
  std::memcpy(stamped.data(), &now, sizeof now);
  std::copy(data.begin(), data.end(), stamped.begin() + sizeof now);
  inner_->send_bytes(stamped, peer, tag);
  book_send(peer, static_cast<double>(data.size()));
}

std::vector<std::byte> VirtualTimeCommunicator::recv_bytes(int peer, int tag) {
  std::vector<std::byte> stamped = inner_->recv_bytes(peer, tag);
  if (stamped.size() < sizeof(core::TimeNs))
    throw HwError("virtual time: a message of " + std::to_string(stamped.size()) +
                  " bytes from peer " + std::to_string(peer) + " carries no sender clock");
  core::TimeNs sent = 0;
  std::memcpy(&sent, stamped.data(), sizeof sent);
  std::vector<std::byte> data(stamped.begin() + sizeof sent, stamped.end());
  arrived(peer, sent, static_cast<double>(data.size()));
  return data;
}

std::unique_ptr<Communicator> VirtualTimeCommunicator::split(int color, int key) {
  std::unique_ptr<Communicator> group = inner_->split(color, key);
  // The members' world ranks, in the group's order (set-up: not priced).
  const double mine = world_[static_cast<std::size_t>(inner_->rank())];
  std::vector<int> world;
  for (double w : group->all_gather(std::span<const double>(&mine, 1)))
    world.push_back(static_cast<int>(w));
  return std::unique_ptr<Communicator>(
      new VirtualTimeCommunicator(std::move(group), clock_, link_, std::move(world), ledger_));
}

}  // namespace parashift::hw
