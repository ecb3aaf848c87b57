#include "tests/hw/group_training.hpp"

#include <exception>
#include <mutex>
#include <thread>

#include "hw/comm/thread_communicator.hpp"
#include "hw/hw_error.hpp"

namespace parashift::test {

void run_ranks(int ranks, const std::function<void(int rank)>& body) {
  std::exception_ptr failure;
  std::mutex mutex;
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      try {
        body(r);
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!failure) failure = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);
}

std::vector<double> train_group(Group& group, const core::ParallelPlan& plan, const GroupRun& run) {
  std::vector<double> losses;
  run_ranks(static_cast<int>(group.size()), [&](int rank) {
    const auto r = static_cast<std::size_t>(rank);
    auto options = tiny_options(run.optimizer, run.job);
    options.ranks_per_node = run.ranks_per_node;
    options.gradient_norms = run.gradient_norms;
    options.text = run.text;
    options.compression_probes = run.probes;
    options.compression_probe_every = run.probe_every;
    if (run.learning_rate > 0) options.optimizer.learning_rate = run.learning_rate;
    hw::HwBackend backend(run.model, run.seq_len, 3, plan, options, *group[r]);
    for (int i = 0; i < run.iterations; ++i) {
      if (run.before) run.before(backend, i);
      // The plan it now runs: a re-plan in `before` may have changed it.
      const core::StepReport report = backend.step(backend.plan());
      // A step that failed (a communicator error) ends the run, as on the
      // CLI; the tests see it as the error it was.
      if (!report.failures.empty()) throw hw::HwError(report.failures.front().detail);
      if (r != 0) continue;
      losses.push_back(backend.last_loss());
      if (run.reports != nullptr) run.reports->push_back(report);
    }
    if (r == 0 && run.final_layers != nullptr) *run.final_layers = backend.layers_per_stage();
    backend.remove_snapshots();
  });
  return losses;
}

std::vector<double> train_threads(const core::ParallelPlan& plan, GroupRun run,
                                  std::vector<core::StepReport>* reports) {
  Group group = hw::make_thread_group(plan.gpus());
  if (reports != nullptr) run.reports = reports;
  return train_group(group, plan, run);
}

double comm_bytes(const core::StepReport& report, const std::string& prefix) {
  double bytes = 0;
  for (const auto& g : report.comm)
    if (g.group.rfind(prefix, 0) == 0) bytes += g.bytes;
  return bytes;
}

}  // namespace parashift::test
