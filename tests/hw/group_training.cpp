#include "tests/hw/group_training.hpp"

#include <exception>
#include <mutex>
#include <thread>

namespace parashift::test {

std::vector<double> train_group(Group& group, const core::ParallelPlan& plan, const GroupRun& run) {
  std::vector<double> losses;
  std::exception_ptr failure;
  std::mutex mutex;
  std::vector<std::thread> threads;
  for (std::size_t r = 0; r < group.size(); ++r)
    threads.emplace_back([&, r] {
      try {
        auto options = tiny_options(run.optimizer, run.job);
        options.ranks_per_node = run.ranks_per_node;
        hw::HwBackend backend(run.model, run.seq_len, 3, plan, options, *group[r]);
        for (int i = 0; i < run.iterations; ++i) {
          if (run.before) run.before(backend, i);
          const core::StepReport report = backend.step(plan);
          if (r != 0) continue;
          losses.push_back(backend.last_loss());
          if (run.reports != nullptr) run.reports->push_back(report);
        }
        if (r == 0 && run.final_layers != nullptr) *run.final_layers = backend.layers_per_stage();
        backend.remove_snapshots();
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!failure) failure = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);
  return losses;
}

}  // namespace parashift::test
