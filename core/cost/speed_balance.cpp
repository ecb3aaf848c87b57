#include "core/cost/speed_balance.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <utility>

#include "core/assert.hpp"
#include "core/rank_layout.hpp"

namespace parashift::core {
namespace {

using Pace = ReplicaPaces::Pace;
using PaceClass = ReplicaPaces::Class;

// The replicas of `plan` holding a GPU whose factor is not 1, ascending by
// replica; empty when there is none. A stage whose GPUs are not all listed
// has some at the reference pace (factor 1) too.
std::vector<Pace> paced_replicas(const ParallelPlan& plan, const std::vector<GpuFactor>& gpus) {
  // In either rank order (core/rank_layout.hpp) the tp x cp GPUs of one
  // (replica, stage) are consecutive: each run of one (replica, stage) in the
  // ascending GPUs is that stage's, folded into its replica as it ends; no
  // sort needed.
  const RankLayout layout(plan);
  const int per_stage = plan.tp * plan.cp;
  struct Acc {
    double slowest = 0;
    double sum = 0;
    int stages = 0;
  };
  std::vector<Acc> acc(static_cast<std::size_t>(plan.dp));
  int replica = -1, stage = -1, listed = 0;
  double f = 0;
  auto close = [&] {
    if (replica < 0) return;
    if (listed < per_stage) f = std::max(f, 1.0);
    Acc& a = acc[static_cast<std::size_t>(replica)];
    a.slowest = std::max(a.slowest, f);
    a.sum += f;
    ++a.stages;
  };
  int last_gpu = -1;
  for (const GpuFactor& g : gpus) {
    if (g.gpu < 0 || g.gpu >= layout.ranks() || !(g.factor > 0) || g.factor == 1) continue;
    PARASHIFT_ASSERT(g.gpu > last_gpu, "GPU factors ascending and unique");
    last_gpu = g.gpu;
    const RankCoord c = layout.coord(g.gpu);
    if (c.dp != replica || c.pp != stage) {
      close();
      replica = c.dp;
      stage = c.pp;
      listed = 0;
      f = 0;
    }
    f = std::max(f, g.factor);
    ++listed;
  }
  close();
  std::vector<Pace> out;
  for (int d = 0; d < plan.dp; ++d) {
    const Acc& a = acc[static_cast<std::size_t>(d)];
    if (a.stages == 0) continue;
    Pace p{d, a.stages < plan.pp ? std::max(a.slowest, 1.0) : a.slowest,
           (a.sum + (plan.pp - a.stages)) / plan.pp};
    out.push_back(p);
  }
  return out;
}

// In units of a healthy micro-batch's stage time t.
struct Shape {
  double beta = 0;  // fill and drain
  int step = 1;     // micro-batches a replica takes at a time
  int per_replica = 1;
  int total = 1;
};

double replica_time(const Pace& p, const Shape& s, int micro_batches) {
  return p.slowest * micro_batches + s.beta * p.mean;
}

// The most micro-batches (a multiple of step) `p` runs within `level`.
int fits(const Pace& p, const Shape& s, double level) {
  const double units = (level - s.beta * p.mean) / (p.slowest * s.step);
  return s.step * static_cast<int>(std::floor(units + 1e-9));
}

// The least level at which every replica holds at least one step and all of
// them together the whole batch.
double balanced_level(const std::vector<PaceClass>& classes, const Shape& s) {
  auto total_at = [&](double level) {
    long long n = 0;
    for (const PaceClass& c : classes) {
      const int m = fits(c.pace, s, level);
      if (m < s.step) return -1LL;
      n += static_cast<long long>(m) * c.count;
    }
    return n;
  };
  // The optimum is some pace's time at a whole number of steps: search each.
  double best = std::numeric_limits<double>::infinity();
  for (const PaceClass& c : classes) {
    int lo = 1, hi = s.total / s.step;
    if (total_at(replica_time(c.pace, s, hi * s.step)) < s.total) continue;
    while (lo < hi) {
      const int mid = lo + (hi - lo) / 2;
      if (total_at(replica_time(c.pace, s, mid * s.step)) >= s.total)
        hi = mid;
      else
        lo = mid + 1;
    }
    best = std::min(best, replica_time(c.pace, s, lo * s.step));
  }
  return best;
}

// The distinct paces of `slow` (one per replica) and the healthy one.
std::vector<PaceClass> classes_of(std::vector<Pace> slow, int dp) {
  std::vector<PaceClass> out;
  const long long healthy = dp - static_cast<long long>(slow.size());
  if (healthy > 0) out.push_back({Pace{}, healthy});
  std::sort(slow.begin(), slow.end(), [](const Pace& a, const Pace& b) {
    return a.slowest != b.slowest ? a.slowest < b.slowest : a.mean < b.mean;
  });
  for (const Pace& p : slow) {
    if (!out.empty() && out.back().pace.replica >= 0 && out.back().pace.slowest == p.slowest &&
        out.back().pace.mean == p.mean)
      ++out.back().count;
    else
      out.push_back({p, 1});
  }
  return out;
}

struct Balanced {
  double stretch = 1;
  double share = 1;  // the critical replica's micro-batches over the even share
  std::vector<int> shares;
};

Balanced balance(const ParallelPlan& plan, const IterationEstimate& healthy,
                 const ReplicaPaces& known, bool want_shares) {
  Balanced out;
  const std::vector<Pace>& paces = known.replicas;
  if (paces.empty()) return out;
  Shape s;
  s.per_replica = plan.micro_batches();
  s.total = s.per_replica * plan.dp;
  s.step = plan.virtual_stages > 1 ? plan.pp : 1;
  const double passes =
      static_cast<double>(healthy.forward_ns + healthy.backward_ns + healthy.recompute_ns);
  if (!(passes > 0) || s.per_replica < 1) return out;
  const double t = passes / s.per_replica;
  s.beta = static_cast<double>(healthy.bubble_ns) / t;
  const double healthy_level = s.per_replica + s.beta;
  const int healthy_count = plan.dp - static_cast<int>(paces.size());

  if (!plan.replicas_may_differ() || plan.dp < 2) {
    double level = healthy_count > 0 ? healthy_level : 0;
    for (const Pace& p : paces) level = std::max(level, replica_time(p, s, s.per_replica));
    out.stretch = level / healthy_level;
    return out;
  }
  const std::vector<PaceClass>& classes = known.classes;
  const double level = balanced_level(classes, s);
  if (!std::isfinite(level)) return out;  // cannot happen for a valid plan; stay healthy
  out.stretch = level / healthy_level;
  // The replica at the level (the last to finish) runs its micro-batches'
  // transfers too: its share of them.
  double latest = -1;
  for (const PaceClass& c : classes) {
    const int m = fits(c.pace, s, level);
    const double done = replica_time(c.pace, s, m);
    if (done > latest) {
      latest = done;
      out.share = static_cast<double>(m) / s.per_replica;
    }
  }
  if (!want_shares) return out;

  // Each replica's most within the level, then the excess taken back one
  // step at a time from the replica that stays busiest without it (ties:
  // the lowest index), never below one step; the level stays the slowest.
  out.shares.assign(static_cast<std::size_t>(plan.dp), 0);
  const Pace healthy_pace;
  std::vector<const Pace*> pace_of(static_cast<std::size_t>(plan.dp), &healthy_pace);
  for (const Pace& p : paces) pace_of[static_cast<std::size_t>(p.replica)] = &p;
  using Entry = std::pair<double, int>;  // (time a step fewer, -replica): largest first
  std::priority_queue<Entry> last;
  long long sum = 0;
  for (int d = 0; d < plan.dp; ++d) {
    const auto i = static_cast<std::size_t>(d);
    out.shares[i] = fits(*pace_of[i], s, level);
    sum += out.shares[i];
    if (out.shares[i] > s.step)
      last.emplace(replica_time(*pace_of[i], s, out.shares[i] - s.step), -d);
  }
  for (; sum > s.total && !last.empty(); sum -= s.step) {
    const auto i = static_cast<std::size_t>(-last.top().second);
    last.pop();
    out.shares[i] -= s.step;
    if (out.shares[i] > s.step)
      last.emplace(replica_time(*pace_of[i], s, out.shares[i] - s.step), -static_cast<int>(i));
  }
  return out;
}

}  // namespace

ReplicaPaces replica_paces(const ParallelPlan& plan, const std::vector<GpuFactor>& gpus) {
  ReplicaPaces out;
  if (gpus.empty()) return out;
  out.replicas = paced_replicas(plan, gpus);
  if (!out.replicas.empty()) out.classes = classes_of(out.replicas, plan.dp);
  return out;
}

SpeedBalance balance_by_speed(const ParallelPlan& plan, const IterationEstimate& healthy,
                              const std::vector<GpuFactor>& slow) {
  const Balanced b = balance(plan, healthy, replica_paces(plan, slow), true);
  return {b.shares, b.stretch, b.share};
}

IterationEstimate with_gpu_factors(const IterationEstimate& healthy, const ParallelPlan& plan,
                                   const std::vector<GpuFactor>& gpus) {
  if (gpus.empty()) return healthy;
  return with_replica_paces(healthy, plan, replica_paces(plan, gpus));
}

IterationEstimate with_replica_paces(const IterationEstimate& healthy, const ParallelPlan& plan,
                                     const ReplicaPaces& paces) {
  const Balanced b = balance(plan, healthy, paces, false);
  if (b.stretch == 1 && b.share == 1) return healthy;
  IterationEstimate e = healthy;
  auto scale = [](TimeNs& t, double by) {
    t = static_cast<TimeNs>(std::llround(static_cast<double>(t) * by));
  };
  scale(e.forward_ns, b.stretch);
  scale(e.backward_ns, b.stretch);
  scale(e.recompute_ns, b.stretch);
  scale(e.bubble_ns, b.stretch);
  scale(e.tp_comm_ns, b.share);
  scale(e.cp_comm_ns, b.share);
  scale(e.pp_comm_ns, b.share);
  e.total_ns = healthy.total_ns + (e.forward_ns - healthy.forward_ns) +
               (e.backward_ns - healthy.backward_ns) + (e.recompute_ns - healthy.recompute_ns) +
               (e.bubble_ns - healthy.bubble_ns) + (e.tp_comm_ns - healthy.tp_comm_ns) +
               (e.cp_comm_ns - healthy.cp_comm_ns) + (e.pp_comm_ns - healthy.pp_comm_ns);
  const double ratio = static_cast<double>(healthy.total_ns) / static_cast<double>(e.total_ns);
  e.mfu = healthy.mfu * ratio;
  e.tokens_per_s = healthy.tokens_per_s * ratio;
  return e;
}

std::vector<GpuFactor> gpu_factors_of(const std::vector<double>& gpu_slowdown) {
  std::vector<GpuFactor> out;
  for (std::size_t g = 0; g < gpu_slowdown.size(); ++g)
    if (gpu_slowdown[g] != 1) out.push_back({static_cast<int>(g), gpu_slowdown[g]});
  return out;
}

std::vector<GpuFactor> merge_factors(const std::vector<GpuFactor>& a,
                                     const std::vector<GpuFactor>& b) {
  std::vector<GpuFactor> out;
  out.reserve(a.size() + b.size());
  std::size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (j == b.size() || (i < a.size() && a[i].gpu < b[j].gpu)) {
      out.push_back(a[i++]);
    } else if (i == a.size() || b[j].gpu < a[i].gpu) {
      out.push_back(b[j++]);
    } else {
      out.push_back({a[i].gpu, a[i].factor * b[j].factor});
      ++i;
      ++j;
    }
  }
  return out;
}

}  // namespace parashift::core
