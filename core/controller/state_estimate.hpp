// The controller's view of the job, robust to single-iteration noise.
//
// Each rank's compute is first normalised to a per-layer, per-micro-batch
// time, u = (compute / m_replica - fixed_stage) / layers_stage, so it stays
// comparable across ranks of different stages and across re-partitions and
// re-balances. Estimates (of exposed communication, of each link's delivered
// rate, of the job's per-layer time) are the median of the last `window`
// samples: one outlier iteration in a window of 5 never moves it, a lasting
// change moves it after (window+1)/2 iterations. A median was chosen over a
// Huber-weighted EWMA because it has no gain to tune and its reaction time is
// exact.
//
// A rank's estimate is split into the job's level and the rank's shape: the
// level is the windowed median of each iteration's median rank's u; the
// shape is the windowed median of the rank's u over its iteration's median
// rank's. A rank's layer_ns() is its shape times the level. Filtering u
// itself would mix the two: when the whole machine changes speed inside a
// window (the hw executor on a shared VM: every rank 1.9x faster from one
// iteration to the next), each rank's median of u falls anywhere between the
// two speeds, wherever its own noise puts it. The median rank is the lower
// middle on an even count, so that with half the ranks slow it is a healthy
// one.
//
// Nor is a burst of machine noise a slow rank. For a few iterations at a time
// such a machine scrambles most ranks' times at once, and a rank that a burst
// hits in 3 iterations of a window of 5 would read slow for a window's
// length. A straggler slows one rank, or a node, a stage, a replica: at most
// half the ranks, which leaves the iteration's spread (the median rank's
// |relative - 1|) where the noise keeps it; a burst moves most ranks and
// multiplies it. An iteration whose spread is over kBurstSpread (3) times
// the median spread of the kSpreadHistory (15) iterations before it, and over
// kSpreadFloor (2%), is a burst: it is no sample of the shape or the level,
// whose windows hold the last `window` iterations that were not. On steady
// noise (the simulator's +-3% jitter: spreads of 1-2%) no iteration is one; a
// lasting change of most ranks stops being one once it fills half the
// history. README.md ("Controller contract") has the measurements.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/backend.hpp"
#include "core/controller/job_model.hpp"

namespace parashift::core {

class StateEstimate {
 public:
  static constexpr double kBurstSpread = 3.0;
  static constexpr double kSpreadFloor = 0.02;
  static constexpr std::size_t kSpreadHistory = 15;

  /// Asserts 1 <= window <= kMaxWindow (15).
  StateEstimate(const ParallelPlan& plan, int window);

  /// Adds one iteration; `job` gives the layer split and micro-batch counts
  /// the iteration ran with.
  void add(const StepReport& report, const JobModel& job);

  int window() const { return window_; }
  std::int64_t samples() const { return samples_; }
  /// Iterations found to be bursts so far (see above).
  std::int64_t bursts() const { return bursts_; }
  /// A full window of samples that were not bursts is in.
  bool ready() const { return kept_ >= window_; }

  int ranks() const { return static_cast<int>(stage_of_rank_.size()); }
  int stage_of(int rank) const { return stage_of_rank_[static_cast<std::size_t>(rank)]; }
  int replica_of(int rank) const { return replica_of_rank_[static_cast<std::size_t>(rank)]; }

  /// Per rank: per-layer, per-micro-batch compute time, level x shape (above).
  const std::vector<double>& layer_ns() const { return layer_ns_; }
  /// The level: the median over the window of each iteration's median rank
  /// (for a rank whose shape is 1, its layer_ns()).
  double median_layer_ns() const { return median_layer_ns_; }
  /// Per rank: median exposed communication per iteration (computed on first
  /// use after each add(): no module reads it every iteration yet).
  const std::vector<double>& exposed_comm_ns() const;
  /// Per rank: the latest peak memory (empty when the backend reports none).
  const std::vector<double>& peak_memory_bytes() const { return peak_memory_bytes_; }
  /// Median iteration time.
  double iteration_ns() const { return iteration_ns_; }

  struct LinkRate {
    std::string name;
    double rate_Bps = 0;  // median of bytes / (utilisation * iteration time); 0: idle
  };
  const std::vector<LinkRate>& links() const { return links_; }

 private:
  struct Window {
    std::vector<double> values;  // [index * window + slot]
    void resize(std::size_t entries, int window) {
      values.assign(entries * static_cast<std::size_t>(window), 0.0);
    }
  };
  // Median of the last min(count, window) values of entry `index`.
  double median_of(const Window& w, std::size_t index, std::int64_t count) const;
  // Records this iteration's spread; true when it makes the iteration a burst.
  bool record_spread(double spread);
  void add_links(const StepReport& report);

  int window_;
  std::int64_t samples_ = 0;
  std::vector<int> stage_of_rank_;
  std::vector<int> replica_of_rank_;
  Window relative_window_;  // u over its iteration's median over ranks
  Window level_window_;     // per iteration: the median over ranks of u
  Window comm_window_;
  Window iteration_window_;
  std::vector<double> layer_ns_;
  mutable std::vector<double> exposed_comm_ns_;
  mutable bool comm_stale_ = false;
  std::vector<double> peak_memory_bytes_;
  std::array<double, kSpreadHistory> spreads_{};  // the last iterations' spreads
  std::int64_t kept_ = 0;                         // iterations in the shape and level windows
  std::int64_t bursts_ = 0;
  std::vector<double> u_;  // this iteration's per-layer times, by rank
  std::vector<double> scratch_;
  std::vector<double> inverse_layers_;   // per stage
  std::vector<double> fixed_per_layer_;  // per stage
  std::vector<double> inverse_micro_;    // per replica
  double median_layer_ns_ = 0;
  double iteration_ns_ = 0;
  // Links are matched by name; a link's window starts when it first appears.
  std::unordered_map<std::string, std::size_t> link_index_;
  std::vector<std::int64_t> link_samples_;
  Window link_window_;
  std::vector<LinkRate> links_;
};

}  // namespace parashift::core
