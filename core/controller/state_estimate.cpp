#include "core/controller/state_estimate.hpp"

#include <algorithm>
#include <cmath>

#include "core/assert.hpp"
#include "core/controller/lower_median.hpp"
#include "core/controller/policy_config.hpp"
#include "core/rank_layout.hpp"

namespace parashift::core {

namespace {

// Median of the n values at v (the mean of the middle two when n is even);
// n = 5 by a min/max network, other n by rank counting: value i's rank is the number of values
// below it, ties broken by position. Branch-free O(n^2): for the usual n = 5 it is 25 compares that
// the compiler vectorises, 3x faster than sorting 5 doubles.
double small_median(const double* v, std::size_t n) {
  if (n == 5) {
    // The default window, with min/max only: of the two pairs' lows drop the
    // lower, of their highs the higher; the median of 5 is the median of the
    // remaining two and the fifth value.
    const double f = std::max(std::min(v[0], v[1]), std::min(v[2], v[3]));
    const double g = std::min(std::max(v[0], v[1]), std::max(v[2], v[3]));
    return std::max(std::min(v[4], f), std::min(std::max(v[4], f), g));
  }
  const std::size_t lo = (n - 1) / 2;
  const std::size_t hi = n / 2;
  double sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t rank = 0;
    for (std::size_t j = 0; j < n; ++j) {
      rank +=
          static_cast<std::size_t>(v[j] < v[i]) + static_cast<std::size_t>(j < i && v[j] == v[i]);
    }
    sum += (rank == lo ? v[i] : 0.0) + (rank == hi ? v[i] : 0.0);
  }
  return 0.5 * sum;
}

}  // namespace

StateEstimate::StateEstimate(const ParallelPlan& plan, int window) : window_(window) {
  PARASHIFT_ASSERT(window >= 1 && window <= kMaxWindow);
  const RankLayout layout(plan);
  const auto ranks = static_cast<std::size_t>(layout.ranks());
  stage_of_rank_.resize(ranks);
  replica_of_rank_.resize(ranks);
  for (std::size_t r = 0; r < ranks; ++r) {
    const RankCoord c = layout.coord(static_cast<int>(r));
    stage_of_rank_[r] = c.pp;
    replica_of_rank_[r] = c.dp;
  }
  relative_window_.resize(ranks, window);
  level_window_.resize(1, window);
  comm_window_.resize(ranks, window);
  iteration_window_.resize(1, window);
  layer_ns_.assign(ranks, 0.0);
  exposed_comm_ns_.assign(ranks, 0.0);
  scratch_.reserve(ranks);
}

bool StateEstimate::record_spread(double spread) {
  // The usual spread: the median of the earlier iterations' (none: no burst).
  const auto earlier =
      static_cast<std::size_t>(std::min<std::int64_t>(samples_, std::int64_t{kSpreadHistory}));
  const bool burst =
      earlier > 0 &&
      spread > std::max(kBurstSpread * small_median(spreads_.data(), earlier), kSpreadFloor);
  spreads_[static_cast<std::size_t>(samples_) % kSpreadHistory] = spread;
  return burst;
}

double StateEstimate::median_of(const Window& w, std::size_t index, std::int64_t count) const {
  const auto n = static_cast<std::size_t>(std::min<std::int64_t>(count, window_));
  return small_median(w.values.data() + index * static_cast<std::size_t>(window_), n);
}

const std::vector<double>& StateEstimate::exposed_comm_ns() const {
  if (comm_stale_) {
    for (std::size_t r = 0; r < exposed_comm_ns_.size(); ++r) {
      exposed_comm_ns_[r] = median_of(comm_window_, r, samples_);
    }
    comm_stale_ = false;
  }
  return exposed_comm_ns_;
}

void StateEstimate::add(const StepReport& report, const JobModel& job) {
  const std::size_t ranks = stage_of_rank_.size();
  PARASHIFT_ASSERT(report.rank_compute_ns.size() == ranks, "ranks=", ranks, " reported ",
                   report.rank_compute_ns.size());
  const auto slot = static_cast<std::size_t>(samples_ % window_);
  const auto w = static_cast<std::size_t>(window_);
  // u = (compute / m_d - fixed_s) / n_s, with the reciprocals taken once per
  // stage and replica rather than per rank.
  const auto pp = static_cast<std::size_t>(job.plan.pp);
  inverse_layers_.resize(pp);
  fixed_per_layer_.resize(pp);
  for (std::size_t s = 0; s < pp; ++s) {
    const double n = std::max(1, job.stage_layers(static_cast<int>(s)));
    inverse_layers_[s] = 1.0 / n;
    fixed_per_layer_[s] = static_cast<double>(job.stage_fixed_ns[s]) / n;
  }
  inverse_micro_.resize(job.micro_batches_per_replica.size());
  for (std::size_t d = 0; d < inverse_micro_.size(); ++d) {
    inverse_micro_[d] = 1.0 / std::max(1, job.micro_batches_per_replica[d]);
  }
  u_.resize(ranks);
  for (std::size_t r = 0; r < ranks; ++r) {
    const auto s = static_cast<std::size_t>(stage_of_rank_[r]);
    const auto d = static_cast<std::size_t>(replica_of_rank_[r]);
    u_[r] =
        static_cast<double>(report.rank_compute_ns[r]) * inverse_micro_[d] * inverse_layers_[s] -
        fixed_per_layer_[s];
    comm_window_.values[r * w + slot] = report.rank_exposed_comm_ns.empty()
                                            ? 0.0
                                            : static_cast<double>(report.rank_exposed_comm_ns[r]);
  }
  // This iteration's median rank (the lower middle: with half the ranks slow
  // it is a healthy one) and each rank relative to it (1 where nothing was
  // computed, as when every stage's time is fixed).
  scratch_.assign(u_.begin(), u_.end());
  const double now = lower_median(scratch_);
  const double inverse_now = now > 0 ? 1.0 / now : 0.0;
  auto relative = [&](std::size_t r) { return now > 0 ? u_[r] * inverse_now : 1.0; };
  scratch_.clear();
  for (std::size_t r = 0; r < ranks; ++r) scratch_.push_back(std::abs(relative(r) - 1.0));
  // A burst says nothing about which rank is slow, nor how fast the job is:
  // it is not a sample of the shape or the level, whose windows keep the
  // last `window` iterations that were not bursts.
  if (record_spread(lower_median(scratch_))) {
    ++bursts_;
  } else {
    const auto kept = static_cast<std::size_t>(kept_ % window_);
    level_window_.values[kept] = now;
    for (std::size_t r = 0; r < ranks; ++r) relative_window_.values[r * w + kept] = relative(r);
    ++kept_;
  }
  iteration_window_.values[slot] = static_cast<double>(report.iteration_ns);
  ++samples_;
  // The level (the median of the window's median ranks) times each rank's shape.
  if (kept_ > 0) {
    median_layer_ns_ = median_of(level_window_, 0, kept_);
    for (std::size_t r = 0; r < ranks; ++r)
      layer_ns_[r] = median_of(relative_window_, r, kept_) * median_layer_ns_;
  }
  iteration_ns_ = median_of(iteration_window_, 0, samples_);
  comm_stale_ = true;
  peak_memory_bytes_.assign(report.rank_peak_memory_bytes.begin(),
                            report.rank_peak_memory_bytes.end());
  add_links(report);
}

void StateEstimate::add_links(const StepReport& report) {
  const double iteration_s = ns_to_s(report.iteration_ns);
  for (const auto& link : report.links) {
    auto [it, inserted] = link_index_.try_emplace(link.link, links_.size());
    if (inserted) {
      links_.push_back({link.link, 0.0});
      link_samples_.push_back(0);
      link_window_.values.resize(links_.size() * static_cast<std::size_t>(window_), 0.0);
    }
    const std::size_t i = it->second;
    const double busy_s = link.utilisation * iteration_s;
    const double rate = busy_s > 0 ? link.bytes / busy_s : 0.0;
    const auto n = link_samples_[i]++;
    double* first = link_window_.values.data() + i * static_cast<std::size_t>(window_);
    first[static_cast<std::size_t>(n % window_)] = rate;
    links_[i].rate_Bps =
        small_median(first, static_cast<std::size_t>(std::min<std::int64_t>(n + 1, window_)));
  }
}

}  // namespace parashift::core
