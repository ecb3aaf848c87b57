#include "sim/network/coflow.hpp"

#include <memory>

namespace parashift::sim {
namespace {

// Shared by the chains of the running phase; freed when the last chain ends.
class CoflowRun : public std::enable_shared_from_this<CoflowRun> {
 public:
  CoflowRun(FlowNetwork& network, std::vector<Phase> phases, std::uint64_t flow_hash,
            std::function<void(TimeNs)> on_done, core::TrafficClass traffic)
      : network_(&network),
        phases_(std::move(phases)),
        flow_hash_(flow_hash),
        on_done_(std::move(on_done)),
        traffic_(traffic) {}

  /// Starts the next phase with work in it, or reports the end.
  void start_next_phase();
  void chain_done() {
    if (--chains_left_ == 0) start_next_phase();
  }
  FlowNetwork& network() const { return *network_; }
  std::uint64_t flow_hash() const { return flow_hash_; }
  core::TrafficClass traffic() const { return traffic_; }

 private:
  FlowNetwork* network_;
  std::vector<Phase> phases_;
  std::uint64_t flow_hash_;
  std::function<void(TimeNs)> on_done_;
  core::TrafficClass traffic_;
  std::size_t next_phase_ = 0;
  int chains_left_ = 0;
};

// One chain in progress; kept alive by the callbacks of its flows.
class ChainRun : public std::enable_shared_from_this<ChainRun> {
 public:
  ChainRun(std::shared_ptr<CoflowRun> parent, Chain chain)
      : parent_(std::move(parent)), chain_(std::move(chain)) {}

  void start_round() {
    // Skip empty rounds; a round of flows ends in flow_done.
    while (round_ < chain_.rounds) {
      transfers_.clear();
      chain_.make_round(round_, transfers_);
      if (!transfers_.empty()) break;
      ++round_;
    }
    if (round_ == chain_.rounds) {
      parent_->chain_done();
      return;
    }
    flows_left_ = static_cast<int>(transfers_.size());
    auto self = shared_from_this();
    for (const Transfer& t : transfers_) {
      parent_->network().start_flow(
          t.src, t.dst, t.bytes, [self] { self->flow_done(); }, parent_->flow_hash(),
          parent_->traffic());
    }
  }

 private:
  void flow_done() {
    if (--flows_left_ > 0) return;
    ++round_;
    start_round();
  }

  std::shared_ptr<CoflowRun> parent_;
  Chain chain_;
  std::vector<Transfer> transfers_;
  int round_ = 0;
  int flows_left_ = 0;
};

void CoflowRun::start_next_phase() {
  while (next_phase_ < phases_.size()) {
    Phase& phase = phases_[next_phase_++];
    chains_left_ = 0;
    for (const Chain& c : phase) chains_left_ += c.rounds > 0 ? 1 : 0;
    if (chains_left_ == 0) continue;
    // chain_done may run synchronously (a chain of empty rounds): count first.
    auto self = shared_from_this();
    for (Chain& c : phase) {
      if (c.rounds > 0) std::make_shared<ChainRun>(self, std::move(c))->start_round();
    }
    return;
  }
  if (on_done_) on_done_(network_->kernel().now());
}

}  // namespace

void run_coflow(FlowNetwork& network, std::vector<Phase> phases, std::uint64_t flow_hash,
                std::function<void(TimeNs done_ns)> on_done, core::TrafficClass traffic) {
  auto run = std::make_shared<CoflowRun>(network, std::move(phases), flow_hash, std::move(on_done),
                                         traffic);
  // Start from a kernel event so on_done never runs inside this call.
  network.kernel().schedule_in(0, [run] { run->start_next_phase(); });
}

}  // namespace parashift::sim
