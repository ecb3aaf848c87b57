#include "core/cost/cost_inputs.hpp"

namespace parashift::core {

WorkProfile CostInputs::work(const DeviceSpec& on, const ParallelPlan& plan) const {
  return work_model ? work_model(on, plan) : work_profile(model, on, plan, seq_len, options);
}

IterationEstimate CostInputs::estimate(const ParallelPlan& plan, const DeviceSpec& on,
                                       const ClusterView& over) const {
  return estimate_iteration(model, on, over, plan, work(on, plan), options);
}

}  // namespace parashift::core
