#include "sim/stagger.hpp"

#include <algorithm>
#include <optional>
#include <span>

#include "core/assert.hpp"
#include "core/cost/work_profile.hpp"
#include "sim/iteration.hpp"
#include "sim/network/flow_network.hpp"
#include "sim/sim_backend.hpp"

namespace parashift::sim {

BusyProfile busy_profile(const core::SharedCluster& cluster, std::size_t job,
                         const topo::Topology& topology) {
  const core::SharedJob& spec = cluster.jobs[job];
  const core::Scenario& s = spec.scenario;
  SimBackend backend(s);
  backend.set_placement(spec.gpu_of_rank);
  IterationInput input;
  core::WorkProfile profile;
  const auto failed = backend.begin_step(s.plan, input, profile);
  PARASHIFT_ASSERT(!failed && input.plan != nullptr, "a shared cluster's job failed");
  Kernel kernel;
  FlowNetwork network(kernel, topology);
  network.set_class_weights(s.traffic);
  BusyProfile out;
  network.set_busy_observer([&out](topo::LinkId link, TimeNs a, TimeNs b) {
    out.busy.push_back({link, a, b});
  });
  const SharedIteration it =
      start_shared_iteration(input, profile, backend.paths(), kernel, network,
                             [&out](IterationResult r) { out.period_ns = r.iteration_ns; });
  kernel.run();
  for (BusyPeriod& p : out.busy) p.end_ns = std::min(p.end_ns, out.period_ns);
  std::sort(out.busy.begin(), out.busy.end(), [](const BusyPeriod& x, const BusyPeriod& y) {
    return x.link != y.link ? x.link < y.link : x.start_ns < y.start_ns;
  });
  return out;
}

namespace {

struct Span {
  TimeNs start_ns, end_ns;
};

// `periods` (one link's, in order) repeated every `period_ns` from
// `start_ns`, cut at the horizon.
std::vector<Span> unrolled(std::span<const BusyPeriod> periods, TimeNs period_ns, TimeNs start_ns,
                           TimeNs horizon_ns) {
  std::vector<Span> out;
  for (TimeNs t0 = start_ns; t0 < horizon_ns; t0 += period_ns)
    for (const BusyPeriod& p : periods)
      if (t0 + p.start_ns < horizon_ns)
        out.push_back({t0 + p.start_ns, std::min(t0 + p.end_ns, horizon_ns)});
  return out;
}

std::span<const BusyPeriod> of_link(const BusyProfile& p, int link) {
  const auto lo = std::lower_bound(p.busy.begin(), p.busy.end(), link,
                                   [](const BusyPeriod& x, int l) { return x.link < l; });
  auto hi = lo;
  while (hi != p.busy.end() && hi->link == link) ++hi;
  return {lo, hi};
}

}  // namespace

TimeNs overlap_ns(const BusyProfile& a, TimeNs a_start_ns, const BusyProfile& b, TimeNs b_start_ns,
                  TimeNs horizon_ns) {
  PARASHIFT_ASSERT(a.period_ns > 0 && b.period_ns > 0, "a busy profile without a period");
  TimeNs total = 0;
  for (std::size_t i = 0; i < a.busy.size();) {
    const int link = a.busy[i].link;
    const auto in_a = of_link(a, link);
    i += in_a.size();
    const auto in_b = of_link(b, link);
    if (in_b.empty()) continue;
    const auto x = unrolled(in_a, a.period_ns, a_start_ns, horizon_ns);
    const auto y = unrolled(in_b, b.period_ns, b_start_ns, horizon_ns);
    // Each list is in order and its spans disjoint: merge.
    for (std::size_t p = 0, q = 0; p < x.size() && q < y.size();) {
      total += std::max<TimeNs>(
          0, std::min(x[p].end_ns, y[q].end_ns) - std::max(x[p].start_ns, y[q].start_ns));
      if (x[p].end_ns < y[q].end_ns)
        ++p;
      else
        ++q;
    }
  }
  return total;
}

StaggerPlan plan_stagger(const std::vector<BusyProfile>& profiles,
                         const std::vector<int>& iterations, int steps) {
  PARASHIFT_ASSERT(profiles.size() == iterations.size() && steps > 0);
  StaggerPlan plan;
  plan.start_ns.assign(profiles.size(), 0);
  if (profiles.empty()) return plan;
  plan.horizon_ns = profiles[0].period_ns * iterations[0];
  for (std::size_t j = 1; j < profiles.size(); ++j)
    plan.horizon_ns = std::min(plan.horizon_ns, profiles[j].period_ns * iterations[j]);
  // Overlap of job j at `start` with the jobs before it, at their starts.
  auto with_earlier = [&](std::size_t j, TimeNs start, const std::vector<TimeNs>& starts) {
    TimeNs sum = 0;
    for (std::size_t i = 0; i < j; ++i)
      sum += overlap_ns(profiles[i], starts[i], profiles[j], start, plan.horizon_ns);
    return sum;
  };
  const std::vector<TimeNs> zero(profiles.size(), 0);
  for (std::size_t j = 1; j < profiles.size(); ++j) {
    plan.unstaggered_overlap_ns += with_earlier(j, 0, zero);
    std::optional<TimeNs> best;
    for (int k = 0; k < steps; ++k) {
      const TimeNs start = profiles[j].period_ns * k / steps;
      const TimeNs o = with_earlier(j, start, plan.start_ns);
      if (!best || o < *best) {
        best = o;
        plan.start_ns[j] = start;
      }
    }
    plan.overlap_ns += *best;
  }
  return plan;
}

}  // namespace parashift::sim
