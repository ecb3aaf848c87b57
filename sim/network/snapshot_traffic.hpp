// Snapshot replication inside an iteration (max-min network only): each
// pair (a rank's GPU, the GPU in its place on a peer host) sends what is
// left of its state as back-to-back chunks of class Snapshot, so it takes
// what weighted max-min leaves it beside the job's own flows. Like a
// tenant's traffic, stop() (the job's optimizer step) lets the chunks in
// flight finish and starts no more; SimBackend carries the bytes still to
// send into the next iterations until every pair is done, and the version
// commits then.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "sim/network/flow_network.hpp"

namespace parashift::sim {

/// One replication on its own: every pair sends `bytes` at once, sharing
/// links max-min among themselves, on `topology` with `link_Bps` overrides
/// (degraded links) and every link at (1 - training_share) of its rate, at
/// least 5% (the job's own traffic keeps its share); a pair's route is
/// hashed by its source GPU. When the last pair is done, from the start. The fault campaigns'
/// replication time, and SimBackend's under the path network, where no flow shares an iteration.
TimeNs replication_alone_ns(const topo::Topology& topology,
                            const std::vector<std::pair<int, double>>& link_Bps,
                            const std::vector<std::pair<int, int>>& pairs, double bytes,
                            double training_share);

class SnapshotTraffic {
 public:
  /// A chunk: small beside a pair's state (tens of GB), large beside a
  /// link's latency (64 MB is 1.3 ms at 50 GB/s).
  static constexpr double kChunkBytes = 64e6;

  /// Starts every pair now, each with `bytes_left` to send.
  SnapshotTraffic(FlowNetwork& network, const std::vector<std::pair<int, int>>& pairs,
                  double bytes_left);
  void stop();
  /// Bytes every pair got through (the least of them).
  double bytes_per_pair() const;
  /// When the last pair sent its last byte; -1 while one has bytes left.
  TimeNs done_ns() const { return state_->pending == 0 ? state_->done_ns : -1; }

 private:
  struct State {
    FlowNetwork* network = nullptr;
    bool stopped = false;
    std::vector<double> sent;  // by pair
    double bytes_left = 0;
    std::size_t pending = 0;  // pairs not done
    TimeNs done_ns = 0;
  };
  static void send(const std::shared_ptr<State>& state, std::size_t pair, int src, int dst);
  std::shared_ptr<State> state_;
};

}  // namespace parashift::sim
