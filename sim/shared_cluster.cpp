#include "sim/shared_cluster.hpp"

#include <algorithm>
#include <functional>
#include <memory>
#include <numeric>

#include "core/assert.hpp"
#include "core/cost/work_profile.hpp"
#include "sim/iteration_state.hpp"
#include "sim/kernel.hpp"
#include "sim/network/flow_network.hpp"
#include "sim/network/tenant_traffic.hpp"
#include "sim/path_model.hpp"

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

// One job's fixed inputs: they outlive every iteration that points into them.
struct JobInput {
  IterationInput input;
  core::WorkProfile profile;
  int iterations = 0;
  int started = 0;
  // Its running iteration and the one before (whose last flows may still
  // end after it did); older ones are released.
  SharedIteration current, previous;
};

}  // namespace

SharedClusterResult run_shared_cluster(const core::SharedCluster& cluster) {
  PARASHIFT_ASSERT(!cluster.jobs.empty(), "a shared cluster without jobs");
  const core::Scenario& first = cluster.jobs.front().scenario;
  // The cluster as it truly is (cluster.truth): every job runs on it.
  const topo::Topology topology = first.truth.topology(first.topology);
  const core::DeviceSpec device = first.truth.device(first.device);
  const PathModel paths(topology);
  std::vector<JobInput> jobs(cluster.jobs.size());
  SharedClusterResult out;
  out.jobs.resize(cluster.jobs.size());
  std::vector<int> users(static_cast<std::size_t>(topology.link_count()), 0);
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const core::SharedJob& spec = cluster.jobs[j];
    const core::Scenario& s = spec.scenario;
    JobInput& job = jobs[j];
    job.input = scenario_input(s, device, NetworkModel::MaxMin);
    job.input.gpu_of_rank = spec.gpu_of_rank;
    job.profile = core::work_profile(s.model, device, s.plan, s.training.seq_len);
    job.iterations = s.run.iterations;
    // Alone on the cluster: what sharing is measured against, and its links.
    const IterationResult alone = simulate_iteration(job.input, job.profile, paths);
    out.jobs[j].alone_ns = alone.iteration_ns;
    for (const LinkUse& use : alone.links) ++users[static_cast<std::size_t>(use.link)];
  }
  for (std::size_t link = 0; link < users.size(); ++link)
    if (users[link] > 1) out.shared_links.push_back(static_cast<int>(link));

  Kernel kernel;
  FlowNetwork network(kernel, topology);
  network.set_class_weights(first.traffic);
  std::vector<std::unique_ptr<TenantTraffic>> tenants(cluster.tenants.size());
  auto stop_tenants = [&tenants] {
    for (auto& tenant : tenants)
      if (tenant) tenant->stop();
  };
  std::size_t jobs_running = jobs.size();
  std::function<void(std::size_t)> start;
  // Job j's iteration ended: the next starts now, or the job is done.
  auto finish = [&](std::size_t j, IterationResult r) {
    SharedJobResult& result = out.jobs[j];
    const core::Scenario& s = cluster.jobs[j].scenario;
    result.iteration_ns.push_back(r.iteration_ns);
    result.tokens += static_cast<double>(s.plan.global_batch) * s.training.seq_len;
    result.last = std::move(r);
    if (jobs[j].started < jobs[j].iterations) return start(j);
    result.end_ns = kernel.now();
    if (--jobs_running == 0) stop_tenants();  // then the kernel runs dry
  };
  start = [&](std::size_t j) {
    JobInput& job = jobs[j];
    ++job.started;
    auto done = [&finish, j](IterationResult r) { finish(j, std::move(r)); };
    job.previous = std::exchange(
        job.current, start_shared_iteration(job.input, job.profile, paths, kernel, network, done));
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
  for (std::size_t j = 0; j < jobs.size(); ++j) start(j);
  kernel.run();
  for (const auto& tenant : tenants) out.tenant_bytes.push_back(tenant ? tenant->bytes_sent() : 0);
  for (const SharedJobResult& j : out.jobs) out.end_ns = std::max(out.end_ns, j.end_ns);
  out.links = detail::link_uses(network);
  out.events = kernel.executed();
  return out;
}

}  // namespace parashift::sim
