// HwBackend::step: one iteration (run_step, hw_backend.cpp), with a
// communicator error turned into the report's typed failure (hw_backend.hpp).
#include "hw/comm/virtual_time.hpp"
#include "hw/exec/hw_backend.hpp"
#include "hw/exec/step_counters.hpp"
#include "hw/hw_error.hpp"

namespace parashift::hw {

core::StepReport HwBackend::step(const core::ParallelPlan& plan) {
  const core::TimeNs start = now_ns(options_.virtual_clock);
  if (virtual_world_ != nullptr) virtual_world_->clear_edges();  // this step's links only
  try {
    return run_step(plan);
  } catch (const HwError& e) {
    core::StepReport report;
    report.iteration = iteration_;
    report.failures.push_back(
        {"comm", "rank " + std::to_string(world_.rank()), start, iteration_, e.what()});
    return report;
  }
}

}  // namespace parashift::hw
