#include "core/controller/balancer.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>
#include <variant>

namespace parashift::core {

namespace {

constexpr int kUnlimited = std::numeric_limits<int>::max();

std::vector<int> current_stage_layers(const JobModel& job) {
  std::vector<int> n(static_cast<std::size_t>(job.plan.pp));
  for (int s = 0; s < job.plan.pp; ++s) n[static_cast<std::size_t>(s)] = job.stage_layers(s);
  return n;
}

std::string list_of(const Directive& d) {
  if (const auto* r = std::get_if<RepartitionDirective>(&d.action))
    return format_int_list(r->layers_per_stage);
  if (const auto* b = std::get_if<RebalanceDirective>(&d.action))
    return format_int_list(b->micro_batches);
  return {};
}

double ms(double t_ns) {
  return std::round(t_ns / 1e4) / 100.0;  // two decimals
}

}  // namespace

MoveCost repartition_cost(const JobModel& job, const std::vector<int>& from_virtual_layers,
                          const std::vector<int>& to_virtual_layers, double bandwidth_Bps) {
  const int pp = job.plan.pp;
  std::vector<int> sent(static_cast<std::size_t>(pp), 0);
  std::vector<int> received(static_cast<std::size_t>(pp), 0);
  MoveCost cost;
  // Walk both splits layer by layer: layer l sits on virtual stage g, i.e. physical g mod pp.
  std::size_t gf = 0, gt = 0;
  int left_f = from_virtual_layers.empty() ? 0 : from_virtual_layers[0];
  int left_t = to_virtual_layers.empty() ? 0 : to_virtual_layers[0];
  for (int l = 0; l < job.layers; ++l) {
    while (left_f == 0) left_f = from_virtual_layers[++gf];
    while (left_t == 0) left_t = to_virtual_layers[++gt];
    const auto from = static_cast<std::size_t>(static_cast<int>(gf) % pp);
    const auto to = static_cast<std::size_t>(static_cast<int>(gt) % pp);
    if (from != to) {
      ++cost.layers_moved;
      ++sent[from];
      ++received[to];
    }
    --left_f;
    --left_t;
  }
  for (std::size_t s = 0; s < sent.size(); ++s) {
    cost.busiest_stage_layers = std::max({cost.busiest_stage_layers, sent[s], received[s]});
  }
  cost.bytes_per_gpu =
      cost.busiest_stage_layers * job.params_per_gpu_layer * job.static_bytes_per_param;
  cost.seconds = cost.bytes_per_gpu / bandwidth_Bps;
  return cost;
}

std::vector<int> stage_layer_caps(const JobModel& job, const StageCosts& costs) {
  std::vector<int> caps(static_cast<std::size_t>(job.plan.pp), job.layers);
  if (job.memory_limit_bytes <= 0) return caps;
  const int most_micro =
      *std::max_element(job.micro_batches_per_replica.begin(), job.micro_batches_per_replica.end());
  for (int s = 0; s < job.plan.pp; ++s) {
    const double per_layer =
        job.params_per_gpu_layer * job.static_bytes_per_param +
        job.activation_bytes_per_layer * in_flight_micro_batches(job.plan, s, most_micro);
    if (per_layer <= 0) continue;
    double measured = 0;
    if (!costs.memory_bytes.empty()) {
      for (int d = 0; d < costs.replicas; ++d) {
        measured =
            std::max(measured, costs.memory_bytes[static_cast<std::size_t>(d * costs.stages + s)]);
      }
    }
    // Memory the stage holds besides its layers (embedding, buffers); 0 unmeasured.
    const double base =
        measured > 0 ? std::max(0.0, measured - job.stage_layers(s) * per_layer) : 0.0;
    const double fit = std::floor((job.memory_limit(s) - base) / per_layer);
    caps[static_cast<std::size_t>(s)] =
        static_cast<int>(std::clamp(fit, 0.0, static_cast<double>(job.layers)));
  }
  return caps;
}

std::vector<int> micro_batch_caps(const JobModel& job, const StageCosts& costs) {
  std::vector<int> caps(static_cast<std::size_t>(job.plan.dp), kUnlimited);
  if (job.memory_limit_bytes <= 0 || job.activation_bytes_per_layer <= 0) return caps;
  for (int d = 0; d < job.plan.dp; ++d) {
    const int m = job.micro_batches_per_replica[static_cast<std::size_t>(d)];
    int cap = kUnlimited;
    for (int s = 0; s < job.plan.pp; ++s) {
      const double per_micro = job.stage_layers(s) * job.activation_bytes_per_layer;
      const double measured =
          costs.memory_bytes.empty()
              ? 0.0
              : costs.memory_bytes[static_cast<std::size_t>(d * costs.stages + s)];
      const double base =
          measured > 0
              ? std::max(0.0, measured - in_flight_micro_batches(job.plan, s, m) * per_micro)
              : 0.0;
      // In flight grows with m up to a schedule-set ceiling (never, for GPipe).
      const double ceiling = in_flight_micro_batches(job.plan, s, kUnlimited);
      if (base + ceiling * per_micro <= job.memory_limit(s)) continue;
      const double fit = std::floor((job.memory_limit(s) - base) / per_micro);
      cap = std::min(cap,
                     static_cast<int>(std::clamp(fit, 0.0, static_cast<double>(kUnlimited / 2))));
    }
    caps[static_cast<std::size_t>(d)] = cap;
  }
  return caps;
}

std::optional<Balancer::Candidate> Balancer::repartition(const PolicyContext& context,
                                                         const StageCosts& costs, double now_ns,
                                                         double remaining) const {
  const JobModel& job = context.job;
  const int chunks = job.plan.virtual_stages;
  if (job.plan.pp < 2 || job.layers <= job.plan.pp * chunks) return std::nullopt;
  std::vector<double> cost_ns(static_cast<std::size_t>(job.plan.pp));
  for (int s = 0; s < job.plan.pp; ++s)
    cost_ns[static_cast<std::size_t>(s)] = costs.slowest_cost(s);
  const auto now_layers = current_stage_layers(job);
  const auto new_layers = balanced_stage_layers(cost_ns, costs.fixed_ns, job.layers, chunks,
                                                stage_layer_caps(job, costs));
  if (new_layers.empty() || new_layers == now_layers) return std::nullopt;
  const double new_ns = iteration_time_ns(costs, new_layers, job.micro_batches_per_replica);
  if (new_ns >= now_ns) return std::nullopt;
  const auto virtual_layers = chunk_split(new_layers, chunks);
  const MoveCost move = repartition_cost(job, job.layers_per_virtual_stage, virtual_layers,
                                         options_.move_bandwidth_Bps);
  // The stage that paced the pipeline, and how much slower its layers run.
  int slowest = 0;
  for (int s = 1; s < job.plan.pp; ++s) {
    const auto si = static_cast<std::size_t>(s);
    const auto wi = static_cast<std::size_t>(slowest);
    if (costs.fixed_ns[si] + now_layers[si] * cost_ns[si] >
        costs.fixed_ns[wi] + now_layers[wi] * cost_ns[wi]) {
      slowest = s;
    }
  }
  Candidate c;
  c.gain_s = (now_ns - new_ns) * 1e-9 * remaining;
  c.cost_s = move.seconds;
  c.improvement = (now_ns - new_ns) / now_ns;
  std::ostringstream reason;
  reason.precision(3);
  const double median = context.state.median_layer_ns();
  reason << "stage " << slowest << " paces the pipeline ("
         << (median > 0 ? cost_ns[static_cast<std::size_t>(slowest)] / median : 1.0)
         << "x median layer time); layers per stage " << format_int_list(now_layers) << " -> "
         << format_int_list(new_layers) << "; iteration " << ms(now_ns) << " -> " << ms(new_ns)
         << " ms; moves " << move.layers_moved << " layers (" << move.bytes_per_gpu / 1e9
         << " GB on the busiest GPU): cost " << move.seconds << " s at "
         << options_.move_bandwidth_Bps / 1e9 << " GB/s; saves " << c.gain_s << " s over "
         << remaining << " iterations";
  c.directive = Directive{RepartitionDirective{virtual_layers}, reason.str(), c.gain_s - c.cost_s};
  return c;
}

std::optional<Balancer::Candidate> Balancer::rebalance(const PolicyContext& context,
                                                       const StageCosts& costs, double now_ns,
                                                       double remaining) const {
  const JobModel& job = context.job;
  if (job.plan.dp < 2 || !job.plan.replicas_may_differ()) return std::nullopt;
  const auto& now_micro = job.micro_batches_per_replica;
  const int total = std::accumulate(now_micro.begin(), now_micro.end(), 0);
  const auto layers = current_stage_layers(job);
  // Interleaved 1F1B runs a replica's micro-batches in groups of pp.
  const int step = job.plan.virtual_stages > 1 ? job.plan.pp : 1;
  const auto new_micro =
      balanced_micro_batches(costs, layers, total, micro_batch_caps(job, costs), now_micro, step);
  if (new_micro.empty() || new_micro == now_micro) return std::nullopt;
  const double new_ns = iteration_time_ns(costs, layers, new_micro);
  if (new_ns >= now_ns) return std::nullopt;
  int slowest = 0;
  double slowest_ns = 0;
  for (int d = 0; d < job.plan.dp; ++d) {
    const double t = replica_time_ns(costs, layers, d, now_micro[static_cast<std::size_t>(d)]);
    if (t > slowest_ns) {
      slowest = d;
      slowest_ns = t;
    }
  }
  Candidate c;
  c.gain_s = (now_ns - new_ns) * 1e-9 * remaining;
  c.cost_s = 0;  // no state moves: the data loader hands out other sample counts
  c.improvement = (now_ns - new_ns) / now_ns;
  std::ostringstream reason;
  reason.precision(3);
  reason << "replica " << slowest << " paces the iteration; micro-batches per replica "
         << format_int_list(now_micro) << " -> " << format_int_list(new_micro) << " (" << total
         << " micro-batches in all: the global batch kept); iteration " << ms(now_ns) << " -> "
         << ms(new_ns) << " ms; no state moves: cost 0 s; saves " << c.gain_s << " s over "
         << remaining << " iterations";
  c.directive = Directive{RebalanceDirective{new_micro}, reason.str(), c.gain_s};
  return c;
}

void Balancer::run(PolicyContext& context) {
  if (!context.capabilities.live_repartition) return;
  const StateEstimate& state = context.state;
  if (!state.ready() || context.iterations_since_change < state.window()) return;
  const double remaining =
      static_cast<double>(context.job.total_iterations - context.iteration - 1);
  if (remaining <= 0) return;
  const StageCosts costs = stage_costs(state, context.job);
  const double now_ns = iteration_time_ns(costs, current_stage_layers(context.job),
                                          context.job.micro_batches_per_replica);
  if (now_ns <= 0) return;
  std::vector<Candidate> candidates;
  if (options_.repartition) {
    if (auto c = repartition(context, costs, now_ns, remaining)) candidates.push_back(*c);
  }
  if (options_.rebalance) {
    if (auto c = rebalance(context, costs, now_ns, remaining)) candidates.push_back(*c);
  }
  const Candidate* best = nullptr;
  for (const auto& c : candidates) {
    if (c.improvement < options_.min_improvement) continue;  // within the model's noise
    const bool pays = c.gain_s > c.cost_s && c.gain_s - c.cost_s >= options_.min_gain_s;
    if (pays) {
      if (!best || c.gain_s - c.cost_s > best->gain_s - best->cost_s) best = &c;
      continue;
    }
    const std::string key = kind_name(c.directive.action) + list_of(c.directive);
    if (key == last_rejected_) continue;
    last_rejected_ = key;
    std::ostringstream why;
    why.precision(3);
    why << "not applied: " << kind_name(c.directive.action) << " " << list_of(c.directive)
        << ": gain " << c.gain_s << " s, cost " << c.cost_s
        << " s: net below min_gain_s = " << options_.min_gain_s << " s (" << c.directive.reason
        << ")";
    context.log.push_back(
        {context.iteration, "balance", why.str(), c.directive, false, c.gain_s, c.cost_s});
  }
  if (!best) {
    pending_.clear();
    pending_for_ = 0;
    return;
  }
  const std::string key = kind_name(best->directive.action) + list_of(best->directive);
  pending_for_ = key == pending_ ? pending_for_ + 1 : 1;
  pending_ = key;
  if (pending_for_ < options_.patience) return;
  pending_.clear();
  pending_for_ = 0;
  context.log.push_back({context.iteration, "balance", to_string(best->directive), best->directive,
                         true, best->gain_s, best->cost_s});
  context.directives.push_back(best->directive);
}

}  // namespace parashift::core
