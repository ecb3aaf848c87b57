#include "sim/shared_cluster.hpp"

#include <algorithm>
#include <functional>
#include <memory>
#include <numeric>

#include "core/assert.hpp"
#include "core/controller/job_runner.hpp"
#include "core/cost/work_profile.hpp"
#include "sim/iteration_state.hpp"
#include "sim/kernel.hpp"
#include "sim/link_window.hpp"
#include "sim/network/flow_network.hpp"
#include "sim/network/tenant_traffic.hpp"
#include "sim/path_model.hpp"
#include "sim/sim_backend.hpp"

namespace parashift::sim {

TimeNs SharedJobResult::mean_iteration_ns() const {
  if (iteration_ns.empty()) return 0;
  return std::accumulate(iteration_ns.begin(), iteration_ns.end(), TimeNs{0}) /
         static_cast<TimeNs>(iteration_ns.size());
}

double SharedJobResult::slowdown() const {
  return static_cast<double>(mean_iteration_ns()) / static_cast<double>(alone_ns) - 1.0;
}

double SharedClusterResult::tokens_per_s() const {
  double sum = 0;
  for (const SharedJobResult& j : jobs) sum += j.tokens_per_s();
  return sum;
}

namespace {

// One job: its backend (the job's view of the cluster: its GPUs, its
// policy's directives) and loop, and what its running iteration points into.
struct JobState {
  explicit JobState(const core::SharedJob& spec)
      : backend(spec.scenario), runner(backend, spec.scenario.plan) {
    backend.set_placement(spec.gpu_of_rank);
    backend.set_reuse(false);  // the other jobs' traffic changes every iteration
    runner.set_policy(spec.scenario, spec.scenario.run.iterations);
  }
  SimBackend backend;
  core::JobRunner runner;
  core::ParallelPlan plan;  // of the running iteration
  IterationInput input;
  core::WorkProfile profile;
  LinkWindow window;  // the links' counters at the running iteration's start
  // The running iteration and the one before (whose last flows may still
  // end after it did); older ones are released.
  SharedIteration current, previous;
};

}  // namespace

SharedClusterResult run_shared_cluster(const core::SharedCluster& cluster) {
  PARASHIFT_ASSERT(!cluster.jobs.empty(), "a shared cluster without jobs");
  const core::Scenario& first = cluster.jobs.front().scenario;
  // The cluster as it truly is (cluster.truth): every job runs on it.
  const topo::Topology topology = first.truth.topology(first.topology);
  SharedClusterResult out;
  out.jobs.resize(cluster.jobs.size());
  std::vector<int> users(static_cast<std::size_t>(topology.link_count()), 0);
  std::vector<std::unique_ptr<JobState>> jobs;
  for (std::size_t j = 0; j < cluster.jobs.size(); ++j) {
    const core::SharedJob& spec = cluster.jobs[j];
    // Alone on the cluster with its policy: what sharing is measured against
    // (its mean iteration), and the links its first iteration uses.
    JobState alone(spec);
    alone.backend.set_reuse(true);
    const int iterations = spec.scenario.run.iterations;
    while (alone.runner.iterations() < iterations && alone.runner.step())
      if (alone.runner.iterations() == 1)
        for (const LinkUse& use : alone.backend.last_result().links)
          ++users[static_cast<std::size_t>(use.link)];
    out.jobs[j].alone_ns = alone.runner.total_ns() / iterations;
    jobs.push_back(std::make_unique<JobState>(spec));
  }
  for (std::size_t link = 0; link < users.size(); ++link)
    if (users[link] > 1) out.shared_links.push_back(static_cast<int>(link));

  Kernel kernel;
  FlowNetwork network(kernel, topology);
  network.set_class_weights(first.traffic);
  // Each job's flows are counted apart, so its telemetry (StepReport::links)
  // shows the others' bytes on its links as foreign, as switch counters do.
  std::vector<int> owner_of_gpu(static_cast<std::size_t>(topology.gpu_count()), -1);
  for (std::size_t j = 0; j < cluster.jobs.size(); ++j)
    for (const int gpu : cluster.jobs[j].gpu_of_rank)
      owner_of_gpu[static_cast<std::size_t>(gpu)] = static_cast<int>(j);
  network.set_gpu_owners(std::move(owner_of_gpu));
  std::vector<std::unique_ptr<TenantTraffic>> tenants(cluster.tenants.size());
  auto stop_tenants = [&tenants] {
    for (auto& tenant : tenants)
      if (tenant) tenant->stop();
  };
  std::size_t jobs_running = jobs.size();
  std::function<void(std::size_t)> start;
  // Job j's iteration ended: its loop observes the report and applies what
  // its policy decides; the next iteration starts after the directives'
  // time (a re-plan's switch), or the job is done.
  auto finish = [&](std::size_t j, IterationResult r) {
    JobState& job = *jobs[j];
    SharedJobResult& result = out.jobs[j];
    const core::Scenario& s = cluster.jobs[j].scenario;
    r.links = job.window.close(network);
    core::StepReport report = job.backend.end_step(job.plan, std::move(r));
    result.iteration_ns.push_back(report.iteration_ns);
    result.tokens += static_cast<double>(job.plan.global_batch) * s.training.seq_len;
    result.last = job.backend.last_result();
    job.runner.record(std::move(report));
    if (job.runner.iterations() < s.run.iterations) {
      kernel.schedule_in(job.backend.pending_move_ns(), [&start, j] { start(j); });
      return;
    }
    result.end_ns = kernel.now();
    result.directives = job.runner.directives();
    result.final_plan = job.runner.plan();
    if (--jobs_running == 0) stop_tenants();  // then the kernel runs dry
  };
  start = [&](std::size_t j) {
    JobState& job = *jobs[j];
    job.runner.begin_iteration();
    job.plan = job.runner.plan();
    const auto failed = job.backend.begin_step(job.plan, job.input, job.profile);
    PARASHIFT_ASSERT(!failed && job.input.plan != nullptr, "a shared cluster's job failed");
    auto done = [&finish, j](IterationResult r) { finish(j, std::move(r)); };
    job.window.open(network, static_cast<int>(j));
    job.previous = std::exchange(
        job.current,
        start_shared_iteration(job.input, job.profile, job.backend.paths(), kernel, network, done));
  };
  // Other tenants: from `at` for `duration`, or until the last job ends.
  for (std::size_t t = 0; t < tenants.size(); ++t) {
    const core::SharedTenant& spec = cluster.tenants[t];
    kernel.schedule_at(spec.at_ns, [&, t] {
      if (jobs_running > 0) tenants[t] = std::make_unique<TenantTraffic>(network, spec.links);
    });
    if (spec.duration_ns)
      kernel.schedule_at(spec.at_ns + *spec.duration_ns, [&tenants, t] {
        if (tenants[t]) tenants[t]->stop();
      });
  }
  if (cluster.stagger) {
    std::vector<BusyProfile> profiles;
    std::vector<int> iterations;
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      profiles.push_back(busy_profile(cluster, j, topology));
      iterations.push_back(cluster.jobs[j].scenario.run.iterations);
    }
    out.stagger = plan_stagger(profiles, iterations);
  }
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    out.jobs[j].start_ns = out.stagger ? out.stagger->start_ns[j] : 0;
    if (out.jobs[j].start_ns == 0)
      start(j);
    else
      kernel.schedule_at(out.jobs[j].start_ns, [&start, j] { start(j); });
  }
  kernel.run();
  for (const auto& tenant : tenants) out.tenant_bytes.push_back(tenant ? tenant->bytes_sent() : 0);
  for (const SharedJobResult& j : out.jobs) out.end_ns = std::max(out.end_ns, j.end_ns);
  out.links = detail::link_uses(network);
  out.events = kernel.executed();
  return out;
}

}  // namespace parashift::sim
