#include "sim/faults/fail_slow.hpp"

#include <algorithm>
#include <cstdlib>
#include <random>
#include <set>
#include <string>

#include "core/input_error.hpp"

namespace parashift::sim {

std::vector<SlowEpisode> draw_fail_slow(const core::FailSlowConfig& config, int gpus,
                                        std::uint64_t seed, TimeNs horizon_ns) {
  std::vector<SlowEpisode> out;
  if (!(config.gpu_mtbf_hours > 0) || gpus <= 0 || config.duration_ns <= 0) return out;
  // A stream of its own: the golden-ratio constant keeps it apart from the
  // failure draws' seed.
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ULL);
  const double horizon_s = core::ns_to_s(horizon_ns);
  std::exponential_distribution<double> gap(gpus / (config.gpu_mtbf_hours * 3600.0));
  std::exponential_distribution<double> length(1.0 / core::ns_to_s(config.duration_ns));
  std::uniform_int_distribution<int> pick(0, gpus - 1);
  for (double t = gap(rng); t < horizon_s; t += gap(rng)) {
    SlowEpisode e;
    e.at_ns = core::seconds_to_ns(t);
    e.gpu = pick(rng);
    e.until_ns =
        std::min(horizon_ns, e.at_ns + std::max<TimeNs>(1, core::seconds_to_ns(length(rng))));
    e.factor = config.factor;
    out.push_back(e);
  }
  return out;
}

std::vector<SlowEpisode> scheduled_slow_episodes(const core::FaultConfig& config, int topology_gpus,
                                                 int gpus_per_host, TimeNs horizon_ns) {
  std::vector<SlowEpisode> out;
  const int hosts = gpus_per_host > 0 ? topology_gpus / gpus_per_host : 0;
  for (const core::FaultEvent& e : config.events) {
    if (e.kind != core::FaultEventKind::Slow || e.factor <= 1) continue;
    const TimeNs until =
        e.duration_ns ? std::min(horizon_ns, e.at_ns + *e.duration_ns) : horizon_ns;
    auto add = [&](int gpu) { out.push_back(SlowEpisode{e.at_ns, until, gpu, e.factor}); };
    if (e.node >= 0) {
      if (e.node >= hosts)
        throw core::InputError(e.where + ".node: host " + std::to_string(e.node) +
                               " does not exist; expected a host in 0.." +
                               std::to_string(hosts - 1));
      for (int g = 0; g < gpus_per_host; ++g) add(e.node * gpus_per_host + g);
    } else {
      if (e.gpu >= topology_gpus)
        throw core::InputError(e.where + ".gpu: GPU " + std::to_string(e.gpu) +
                               " does not exist; expected a GPU in 0.." +
                               std::to_string(topology_gpus - 1));
      add(e.gpu);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

double overlap_s(const std::vector<Interval>& intervals, const Interval& span) {
  // The first interval that may end after the span starts.
  auto it = std::lower_bound(intervals.begin(), intervals.end(), span.from_ns,
                             [](const Interval& i, TimeNs t) { return i.to_ns <= t; });
  TimeNs sum = 0;
  for (; it != intervals.end() && it->from_ns < span.to_ns; ++it)
    sum +=
        std::max<TimeNs>(0, std::min(it->to_ns, span.to_ns) - std::max(it->from_ns, span.from_ns));
  return core::ns_to_s(sum);
}

double slow_lost_s(const std::vector<Interval>& trained, const std::vector<SlowSpan>& spans) {
  // A sweep over the spans' ends: between two consecutive ends the same
  // spans are active, and the largest share among them is lost.
  std::vector<std::pair<TimeNs, int>> ends;  // (time, span index + 1 starts, -(index + 1) ends)
  for (std::size_t i = 0; i < spans.size(); ++i) {
    if (spans[i].span.to_ns <= spans[i].span.from_ns) continue;
    const int id = static_cast<int>(i) + 1;
    ends.push_back({spans[i].span.from_ns, id});
    ends.push_back({spans[i].span.to_ns, -id});
  }
  std::sort(ends.begin(), ends.end());
  std::multiset<double> active;
  double lost = 0;
  for (std::size_t k = 0; k < ends.size(); ++k) {
    const auto [at, id] = ends[k];
    const double share = spans[static_cast<std::size_t>(std::abs(id) - 1)].lost_share;
    if (id > 0) {
      active.insert(share);
    } else {
      active.erase(active.find(share));
    }
    if (!active.empty() && k + 1 < ends.size() && ends[k + 1].first > at)
      lost += overlap_s(trained, {at, ends[k + 1].first}) * *active.rbegin();
  }
  return lost;
}

}  // namespace parashift::sim
