#include "fake_backend.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

#include "core/rank_layout.hpp"
#include "core/work_split.hpp"

namespace parashift::test {

FakeBackend::FakeBackend(const ContractCase& c)
    : case_(c),
      layers_(core::even_split(c.layers, c.plan.pp * c.plan.virtual_stages)),
      micro_(static_cast<std::size_t>(c.plan.dp), c.plan.micro_batches()),
      slowdown_(static_cast<std::size_t>(c.plan.gpus()), 1.0),
      rng_(c.seed),
      placement_(c.plan.gpus(), c.spare_gpus) {}

double FakeBackend::uniform() {
  // splitmix64: the same stream on every platform.
  std::uint64_t z = (rng_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53 * 2.0 - 1.0;
}

core::Capabilities FakeBackend::capabilities() const {
  core::Capabilities caps;
  caps.live_repartition = true;
  caps.live_replan = true;
  caps.snapshots_to_host = true;
  caps.ranks = case_.plan.gpus();
  placement_.describe(caps);
  return caps;
}

core::StepReport FakeBackend::step(const core::ParallelPlan& plan) {
  if (!failing_.empty()) {
    core::StepReport failed;
    failed.iteration = iteration_;
    for (int g : std::exchange(failing_, {})) {
      placement_.fail(g);
      failed.failures.push_back({"fail", "gpu " + std::to_string(g), 0, iteration_, {}});
    }
    return failed;
  }
  const core::RankLayout layout(plan);
  const int pp = plan.pp;
  const int v = plan.virtual_stages;
  std::vector<int> stage_layers(static_cast<std::size_t>(pp), 0);
  for (int g = 0; g < pp * v; ++g)
    stage_layers[static_cast<std::size_t>(g % pp)] += layers_[static_cast<std::size_t>(g)];
  core::StepReport report;
  report.iteration = iteration_++;
  const auto ranks = static_cast<std::size_t>(layout.ranks());
  report.rank_compute_ns.resize(ranks);
  report.rank_exposed_comm_ns.assign(ranks, 0);
  report.rank_peak_memory_bytes.resize(ranks);
  // Per worker (stage, replica): per-micro-batch time of its slowest rank.
  std::vector<double> worker_ns(static_cast<std::size_t>(pp * plan.dp), 0.0);
  for (std::size_t r = 0; r < ranks; ++r) {
    const core::RankCoord c = layout.coord(static_cast<int>(r));
    const auto s = static_cast<std::size_t>(c.pp);
    const double per_mb = stage_layers[s] * static_cast<double>(case_.layer_ns) * slowdown_[r] *
                          (1.0 + case_.jitter * uniform());
    const int m = micro_[static_cast<std::size_t>(c.dp)];
    report.rank_compute_ns[r] = static_cast<core::TimeNs>(per_mb * m);
    report.rank_peak_memory_bytes[r] = stage_layers[s] * case_.params_per_gpu_layer * 16.0;
    auto& w = worker_ns[static_cast<std::size_t>(c.dp * pp + c.pp)];
    w = std::max(w, per_mb);
  }
  // (m - 1) x slowest stage + sum of stages / v, slowest replica.
  double iteration = 0;
  for (int d = 0; d < plan.dp; ++d) {
    double slowest = 0, sum = 0;
    for (int s = 0; s < pp; ++s) {
      const double t = worker_ns[static_cast<std::size_t>(d * pp + s)];
      slowest = std::max(slowest, t);
      sum += t;
    }
    iteration = std::max(iteration, (micro_[static_cast<std::size_t>(d)] - 1) * slowest + sum / v);
  }
  report.iteration_ns = static_cast<core::TimeNs>(iteration);
  return report;
}

void FakeBackend::apply(const core::Directive& directive) {
  if (const auto* r = std::get_if<core::RepartitionDirective>(&directive.action)) {
    layers_ = r->layers_per_stage;
    return;
  }
  if (const auto* b = std::get_if<core::RebalanceDirective>(&directive.action)) {
    micro_ = b->micro_batches;
    return;
  }
  if (const auto* p = std::get_if<core::ReplanDirective>(&directive.action)) {
    if (p->plan.gpus() != case_.plan.gpus()) {
      placement_.place_afresh(p->plan.gpus(), p->plan.label(), "fake backend");
    }
    case_.plan = p->plan;  // even splits of the new plan, as a fresh job
    layers_ = core::even_split(case_.layers, p->plan.pp * p->plan.virtual_stages);
    micro_.assign(static_cast<std::size_t>(p->plan.dp), p->plan.micro_batches());
    return;
  }
  if (const auto* d = std::get_if<core::SnapshotDirective>(&directive.action)) {
    snapshots_.push_back(d->version);
    return;
  }
  if (const auto* d = std::get_if<core::RestoreDirective>(&directive.action)) {
    if (std::find(snapshots_.begin(), snapshots_.end(), d->version) == snapshots_.end())
      throw std::invalid_argument("fake backend: no snapshot v" + std::to_string(d->version));
    iteration_ = d->version;
    return;
  }
  if (const auto* d = std::get_if<core::RemapDirective>(&directive.action)) {
    placement_.remap(d->rank, d->spare_gpu, "fake backend");
    return;
  }
  throw std::invalid_argument(std::string("fake backend cannot apply ") +
                              core::kind_name(directive.action));
}

core::JobModel contract_job(const ContractCase& c, std::int64_t total_iterations) {
  core::JobModel job;
  job.plan = c.plan;
  job.layers = c.layers;
  job.params_per_gpu_layer = c.params_per_gpu_layer;
  job.static_bytes_per_param = 16.0;
  job.total_iterations = total_iterations;
  job.normalise();
  return job;
}

core::JobModel FakeHarness::job(std::int64_t total_iterations) const {
  return contract_job(case_, total_iterations);
}

}  // namespace parashift::test
